//! What a stdio server inherits from `junction`: only the safe list (HOME, PATH, LANG, …)
//! and its entry's own `env`, never the host's secrets.

use junction_host::servers::environment::is_safe;
use junction_test_support::cli;
use junction_test_support::hostile::Hostile;
use serde_json::json;

/// Variables a shell sets for itself when it starts.
const SHELL_OWN: [&str; 4] = ["PWD", "OLDPWD", "SHLVL", "_"];

#[test]
fn no_host_variable_outside_the_safe_list_reaches_a_stdio_server() {
    let server = Hostile::new("environment");
    let mut entry = server.entry();
    entry["env"] = json!({"OWN_SETTING": "1", "LANG": null});
    let config = server.path("config.json");
    std::fs::write(&config, json!({"mcpServers": {"probe": entry}}).to_string()).unwrap();
    let model = server.path("model.json");
    std::fs::write(&model, json!([{"text": "hello"}]).to_string()).unwrap();
    let output = cli::host_command(&server.path("config"))
        .args(["run", "--config", config.to_str().unwrap()])
        .arg("--model")
        .arg(format!("scripted:{}", model.display()))
        .arg("hi")
        .env("ANTHROPIC_API_KEY", "sk-ant-secret")
        .env("OPENAI_API_KEY", "sk-secret")
        .env("AWS_SECRET_ACCESS_KEY", "aws-secret")
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let names = server.environment();
    assert!(names.contains(&"PATH".to_owned()), "{names:?}");
    assert!(names.contains(&"LC_ALL".to_owned()), "{names:?}");
    assert!(names.contains(&"OWN_SETTING".to_owned()), "{names:?}");
    assert!(
        !names.contains(&"LANG".to_owned()),
        "a null value removes: {names:?}"
    );
    let leaked: Vec<&String> = names
        .iter()
        .filter(|n| !is_safe(n) && *n != "OWN_SETTING" && !SHELL_OWN.contains(&n.as_str()))
        .collect();
    assert!(
        leaked.is_empty(),
        "host variables reached the server: {leaked:?}"
    );
}
