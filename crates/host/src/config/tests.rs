use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("s3cret".to_owned()),
        "HOME" => Some("/home/ada".to_owned()),
        _ => None,
    }
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("/etc/junction/servers.json"), &env)
}

fn stdio(config: &Config, name: &str) -> StdioConfig {
    match &config.server(name).unwrap().transport {
        TransportConfig::Stdio(s) => s.clone(),
        other => panic!("{name} is not stdio: {other:?}"),
    }
}

#[test]
fn claude_desktop_entries_are_stdio_servers_with_expanded_values() {
    let config = parse(
        r#"{"mcpServers": {"files": {"command": "npx", "args": ["-y", "server-files", "${HOME}/docs"],
            "env": {"API_KEY": "${TOKEN}", "PORT": 8080}}}, "globalShortcut": "x"}"#,
    )
    .unwrap();
    let files = stdio(&config, "files");
    assert_eq!(files.command, "npx");
    assert_eq!(files.args, vec!["-y", "server-files", "/home/ada/docs"]);
    assert_eq!(files.env["API_KEY"].as_deref(), Some("s3cret"));
    assert_eq!(files.env["PORT"].as_deref(), Some("8080"));
    let entry = config.server("files").unwrap();
    assert!(!entry.trusted && !entry.disabled);
    assert_eq!(entry.source, Path::new("/etc/junction/servers.json"));
}

#[test]
fn mcp_json_types_select_the_transport() {
    let config = parse(
        r#"{"mcpServers": {
            "local": {"type": "stdio", "command": "node", "args": ["srv.js"]},
            "remote": {"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer ${API_KEY:-none}"}},
            "legacy": {"type": "sse", "url": "https://x/sse"}}}"#,
    )
    .unwrap();
    assert_eq!(stdio(&config, "local").command, "node");
    assert_eq!(
        config.server("remote").unwrap().transport,
        TransportConfig::Http(HttpConfig {
            url: "https://x/mcp".into(),
            headers: [("Authorization".to_owned(), "Bearer none".to_owned())].into(),
            legacy_sse: false,
            oauth: None,
        })
    );
    assert!(matches!(
        &config.server("legacy").unwrap().transport,
        TransportConfig::Http(HttpConfig {
            legacy_sse: true,
            ..
        })
    ));
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["legacy", "local", "remote"]);
}

#[test]
fn vs_code_files_with_comments_trailing_commas_and_null_env_are_read() {
    let config = parse(
        r#"{
          // VS Code writes JSONC
          "inputs": [],
          "servers": {
            "py": {"type": "stdio", "command": "python", "args": ["-m", "srv",], "env": {"UNSET_ME": null},
                   "cwd": "${env:HOME}/proj"},
            "web": {"url": "http://localhost:3001/mcp"}, /* type omitted: url means http */
          },
        }"#,
    )
    .unwrap();
    let py = stdio(&config, "py");
    assert_eq!(py.env["UNSET_ME"], None);
    assert_eq!(py.cwd, Some(PathBuf::from("/home/ada/proj")));
    assert!(matches!(
        config.server("web").unwrap().transport,
        TransportConfig::Http(_)
    ));
}

#[test]
fn junction_members_set_trust_disabled_timeouts_and_policy() {
    let config = parse(
        r#"{"mcpServers": {
              "library": {"command": "lib", "trusted": true, "startupTimeoutMs": 1500,
                          "policy": {"delete_*": "deny", "search": "allow"}},
              "old": {"command": "old", "disabled": true}},
            "junction": {"policy": {"*__drop_*": "ask"}, "consentFile": "${HOME}/.junction/consent.json"}}"#,
    )
    .unwrap();
    let library = config.server("library").unwrap();
    assert!(library.trusted);
    assert_eq!(library.startup_timeout, Some(Duration::from_millis(1500)));
    assert!(config.server("old").unwrap().disabled);
    let mut rules = config.policy.rules.clone();
    rules.sort_by(|a, b| a.pattern.cmp(&b.pattern));
    assert_eq!(
        rules,
        vec![
            Rule::new("*__drop_*", Action::Ask),
            Rule::new("library__delete_*", Action::Deny),
            Rule::new("library__search", Action::Allow),
        ]
    );
    assert_eq!(
        config.policy.consent_file,
        Some(PathBuf::from("/home/ada/.junction/consent.json"))
    );
    assert_eq!(config.max_tool_output, None);
}

#[test]
fn max_tool_output_is_read_from_the_junction_section() {
    let config = parse(r#"{"junction": {"maxToolOutput": 2048}}"#).unwrap();
    assert_eq!(config.max_tool_output, Some(2048));
}

#[test]
fn the_bounds_on_what_servers_send_are_read_from_the_junction_section() {
    let config = parse(
        r#"{"junction": {"maxListItems": 50, "maxListBytes": 65536, "maxMessage": 1048576, "maxServerLog": 4096}}"#,
    )
    .unwrap();
    assert_eq!(config.max_list_items, Some(50));
    assert_eq!(config.max_list_bytes, Some(65536));
    assert_eq!(config.max_message, Some(1048576));
    assert_eq!(config.max_server_log, Some(4096));
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    let unset = parse(r#"{"junction": {"maxListItems": null}}"#).unwrap();
    assert_eq!(
        (
            unset.max_list_items,
            unset.max_list_bytes,
            unset.max_message,
            unset.max_server_log
        ),
        (None, None, None, None)
    );
    for key in ["maxListItems", "maxListBytes", "maxMessage", "maxServerLog"] {
        for bad in ["0", "-1", "2.5", "\"4 MiB\"", "[]"] {
            let (server, field, reason) =
                invalid(&format!(r#"{{"junction": {{"{key}": {bad}}}}}"#));
            assert_eq!((server, field), (None, format!("junction.{key}")), "{bad}");
            assert!(reason.contains("positive whole number"), "{reason}");
        }
    }
}

#[test]
fn the_config_bounds_reach_every_servers_client() {
    let config = parse(r#"{"junction": {"maxListItems": 7, "maxMessage": 1000}}"#).unwrap();
    let options = crate::servers::StartOptions::default().limits_of(&config);
    assert_eq!(options.client.max_list_items, 7);
    assert_eq!(
        options.client.max_list_bytes,
        junction::client::MAX_LIST_BYTES,
        "a bound the config leaves out keeps its default"
    );
    assert_eq!(options.max_message, 1000);
}

#[test]
fn sampling_defaults_to_ask_and_roots_to_none_and_both_are_read_per_server() {
    let config = parse(
        r#"{"mcpServers": {
              "plain": {"command": "p"},
              "writer": {"command": "w", "sampling": "allow",
                         "roots": ["file://${HOME}/notes", "file:///srv/shared"]},
              "quiet": {"command": "q", "sampling": "deny", "roots": []}}}"#,
    )
    .unwrap();
    let plain = config.server("plain").unwrap();
    assert_eq!((plain.sampling, plain.roots.clone()), (Action::Ask, None));
    let writer = config.server("writer").unwrap();
    assert_eq!(writer.sampling, Action::Allow);
    assert_eq!(
        writer.roots.as_deref(),
        Some(
            &[
                "file:///home/ada/notes".to_owned(),
                "file:///srv/shared".to_owned()
            ][..]
        )
    );
    let quiet = config.server("quiet").unwrap();
    assert_eq!(
        (quiet.sampling, quiet.roots.clone()),
        (Action::Deny, Some(Vec::new()))
    );
}

#[test]
fn bad_sampling_and_roots_entries_name_the_field() {
    let (_, field, _) = invalid(r#"{"mcpServers": {"a": {"command": "x", "sampling": "yes"}}}"#);
    assert_eq!(field, "sampling");
    let (_, field, _) = invalid(r#"{"mcpServers": {"a": {"command": "x", "roots": "file:///"}}}"#);
    assert_eq!(field, "roots");
    let (_, field, reason) =
        invalid(r#"{"mcpServers": {"a": {"command": "x", "roots": ["file:///ok", "/srv/x"]}}}"#);
    assert_eq!(field, "roots[1]");
    assert!(reason.contains("/srv/x"), "{reason}");
}

fn invalid(text: &str) -> (Option<String>, String, String) {
    match parse(text).unwrap_err() {
        ConfigError::Invalid {
            path,
            server,
            field,
            reason,
        } => {
            assert_eq!(path, Path::new("/etc/junction/servers.json"));
            (server, field, reason)
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn bad_entries_name_the_file_the_server_and_the_field() {
    let (server, field, _) = invalid(r#"{"mcpServers": {"a": {"command": "x", "args": "-v"}}}"#);
    assert_eq!((server.as_deref(), field.as_str()), (Some("a"), "args"));
    let (_, field, _) = invalid(r#"{"mcpServers": {"a": {"command": "x", "args": ["ok", {}]}}}"#);
    assert_eq!(field, "args[1]");
    let (_, field, _) = invalid(r#"{"mcpServers": {"a": {"args": []}}}"#);
    assert_eq!(field, "command");
    let (_, field, reason) =
        invalid(r#"{"mcpServers": {"a": {"type": "websocket", "url": "ws://x"}}}"#);
    assert_eq!(field, "type");
    assert!(reason.contains("websocket"), "{reason}");
    let (_, field, _) = invalid(r#"{"mcpServers": {"a": {"type": "http", "url": "ftp://x"}}}"#);
    assert_eq!(field, "url");
    let (_, field, _) = invalid(r#"{"mcpServers": {"a": {"command": "x", "trusted": "yes"}}}"#);
    assert_eq!(field, "trusted");
    let (_, field, _) =
        invalid(r#"{"mcpServers": {"a": {"command": "x", "policy": {"t": "maybe"}}}}"#);
    assert_eq!(field, "policy.t");
    let (server, field, _) = invalid(r#"{"junction": {"policy": {"*": "sometimes"}}}"#);
    assert_eq!((server, field.as_str()), (None, "junction.policy.*"));
    for bad in ["0", "-5", "1.5", "\"big\""] {
        let (_, field, _) = invalid(&format!(r#"{{"junction": {{"maxToolOutput": {bad}}}}}"#));
        assert_eq!(field, "junction.maxToolOutput", "{bad}");
    }
    let (_, field, _) = invalid(r#"{"mcpServers": {"a": {"command": "x", "env": {"K": []}}}}"#);
    assert_eq!(field, "env.K");
}

#[test]
fn server_names_that_would_break_tool_names_are_refused() {
    let (server, _, reason) = invalid(r#"{"mcpServers": {"my__srv": {"command": "x"}}}"#);
    assert_eq!(server.as_deref(), Some("my__srv"));
    assert!(reason.contains("__"), "{reason}");
    let (_, _, reason) = invalid(r#"{"servers": {"a:b": {"command": "x"}}}"#);
    assert!(reason.contains(':'), "{reason}");
}

#[test]
fn a_name_in_both_sections_is_refused() {
    let (server, _, reason) =
        invalid(r#"{"mcpServers": {"a": {"command": "x"}}, "servers": {"a": {"command": "y"}}}"#);
    assert_eq!(server.as_deref(), Some("a"));
    assert!(reason.contains("both"), "{reason}");
}

#[test]
fn syntax_errors_give_the_file_line_and_column() {
    let err = parse("{\n  \"mcpServers\": {\n    \"a\": {\"command\": }\n  }\n}").unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("/etc/junction/servers.json:3:"), "{text}");
}

#[test]
fn a_missing_file_is_a_read_error_naming_it() {
    let err = Config::load("/nonexistent/junction/servers.json").unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }));
    assert!(
        err.to_string()
            .contains("/nonexistent/junction/servers.json"),
        "{err}"
    );
}

#[test]
fn an_unset_variable_without_a_default_names_the_server_and_the_variable() {
    let err =
        parse(r#"{"mcpServers": {"gh": {"command": "x", "env": {"TOKEN": "${GITHUB_TOKEN}"}}}}"#)
            .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("server `gh`")
            && text.contains("env.TOKEN")
            && text.contains("`GITHUB_TOKEN` is not set"),
        "{text}"
    );
    let err = parse(r#"{"mcpServers": {"r": {"url": "https://x/${NOPE}"}}}"#).unwrap_err();
    assert!(err.to_string().contains("`NOPE` is not set"), "{err}");
    let ok = parse(r#"{"mcpServers": {"r": {"url": "https://x/${NOPE:-mcp}"}}}"#).unwrap();
    assert!(
        matches!(&ok.server("r").unwrap().transport, TransportConfig::Http(h) if h.url == "https://x/mcp")
    );
}

#[test]
fn unknown_members_are_warned_about_with_the_closest_known_one() {
    let config = parse(
        r#"{"mcpServers": {"a": {"comand": "x", "command": "y", "autoApprove": []}},
            "junction": {"consentFlie": "c.json"}, "globalShortcut": "x"}"#,
    )
    .unwrap();
    assert_eq!(
        config.warnings,
        [
            "/etc/junction/servers.json: server `a`: unknown member `comand` is ignored; did you mean `command`?",
            "/etc/junction/servers.json: junction: unknown member `consentFlie` is ignored; did you mean `consentFile`?",
        ]
    );
}

#[test]
fn env_files_null_values_and_the_workspace_folder_are_read() {
    let dir = std::env::temp_dir().join(format!("junction-config-envfile-{}", std::process::id()));
    let vscode = dir.join(".vscode");
    std::fs::create_dir_all(&vscode).unwrap();
    std::fs::write(dir.join("secrets.env"), "TOKEN=from-file\nKEEP=1\n").unwrap();
    let text = r#"{"servers": {"s": {"command": "x", "args": ["${workspaceFolder}/data"],
        "envFile": "${workspaceFolder}/secrets.env", "env": {"TOKEN": "from-entry", "HOME": null}}}}"#;
    let config = Config::parse(text, &vscode.join("mcp.json"), &env).unwrap();
    let s = stdio(&config, "s");
    assert_eq!(s.args, [format!("{}/data", dir.display())]);
    assert_eq!(s.env["TOKEN"].as_deref(), Some("from-entry"));
    assert_eq!(s.env["KEEP"].as_deref(), Some("1"));
    assert_eq!(s.env["HOME"], None);
    let missing = Config::parse(
        r#"{"servers": {"s": {"command": "x", "envFile": "nope.env"}}}"#,
        &vscode.join("mcp.json"),
        &env,
    )
    .unwrap_err();
    assert!(
        missing.to_string().contains("envFile") && missing.to_string().contains("nope.env"),
        "{missing}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tool_timeouts_and_the_system_prompt_are_read() {
    let config = parse(
        r#"{"mcpServers": {"slow": {"command": "x", "toolTimeoutMs": 300000}},
            "junction": {"toolTimeoutMs": 120000, "systemPrompt": "Be brief."}}"#,
    )
    .unwrap();
    assert_eq!(config.tool_timeout, Some(Duration::from_secs(120)));
    assert_eq!(
        config.server("slow").unwrap().tool_timeout,
        Some(Duration::from_secs(300))
    );
    assert_eq!(config.system_prompt.as_deref(), Some("Be brief."));
    assert!(parse(r#"{"junction": {"toolTimeoutMs": 0}}"#).is_err());
}

#[test]
fn the_task_threshold_is_read_zero_included_and_a_wrong_one_is_an_error() {
    let config = parse(
        r#"{"mcpServers": {"now": {"command": "x", "taskAfterMs": 0},
                           "slow": {"command": "x", "taskAfterMs": 5000},
                           "plain": {"command": "x"}}}"#,
    )
    .unwrap();
    assert_eq!(
        config.server("now").unwrap().task_after,
        Some(Duration::ZERO)
    );
    assert_eq!(
        config.server("slow").unwrap().task_after,
        Some(Duration::from_secs(5))
    );
    assert_eq!(config.server("plain").unwrap().task_after, None);
    let err = parse(r#"{"mcpServers": {"s": {"command": "x", "taskAfterMs": "soon"}}}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("taskAfterMs"), "{err}");
}

#[test]
fn the_log_level_is_read_and_a_wrong_one_is_an_error() {
    let parse = |junction: serde_json::Value| {
        let text = serde_json::json!({"mcpServers": {}, "junction": junction}).to_string();
        Config::parse(&text, Path::new("t.json"), &|_| None)
    };
    assert_eq!(
        parse(serde_json::json!({"logLevel": "error"}))
            .unwrap()
            .log_level,
        Some(LoggingLevel::Error)
    );
    assert_eq!(parse(serde_json::json!({})).unwrap().log_level, None);
    let error = parse(serde_json::json!({"logLevel": "loud"})).unwrap_err();
    assert!(error.to_string().contains("junction.logLevel"), "{error}");
}

#[test]
fn markdown_can_be_turned_off_and_a_wrong_value_is_an_error() {
    let parse = |junction: serde_json::Value| {
        let text = serde_json::json!({"mcpServers": {}, "junction": junction}).to_string();
        Config::parse(&text, Path::new("t.json"), &|_| None)
    };
    let off = parse(serde_json::json!({"markdown": false})).unwrap();
    assert_eq!(off.markdown, Some(false));
    assert!(off.warnings.is_empty(), "{:?}", off.warnings);
    assert_eq!(parse(serde_json::json!({})).unwrap().markdown, None);
    let error = parse(serde_json::json!({"markdown": "no"})).unwrap_err();
    assert!(error.to_string().contains("junction.markdown"), "{error}");
}

#[test]
fn an_oauth_member_is_read_without_an_unknown_member_warning() {
    let text = serde_json::json!({"mcpServers": {"remote": {
        "url": "https://mcp.example.com/mcp",
        "oauth": {"clientId": "junction-test"}
    }}})
    .to_string();
    let config = Config::parse(&text, Path::new("t.json"), &|_| None).unwrap();
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
}
