//! What a host offers, as lines for the person: the tools under the names the model sees,
//! the prompts as slash commands, the resources to attach, and the servers. Every name and
//! description a server chose goes through [`junction_host::display`] first, so a listing
//! cannot be rewritten or hidden by the server's own text.

use junction_host::display;
use junction_host::policy::canonical::is_disguised;
use junction_host::resources::Attachable;
use junction_host::Host;
use junction_protocol::prompts::Prompt;

use super::shorten;

/// How many characters of a description are shown.
const DESCRIPTION_SHOWN: usize = 80;

fn first_line(text: Option<&str>) -> String {
    shorten(
        &display::line(text.unwrap_or_default().lines().next().unwrap_or_default()),
        DESCRIPTION_SHOWN,
    )
}

fn with_description(head: String, description: Option<&str>) -> String {
    let description = first_line(description);
    if description.is_empty() {
        format!("  {head}")
    } else {
        format!("  {head}  {description}")
    }
}

/// What the servers offer, counted in one line, with the commands that list it: the
/// chat's start says no more, however many tools there are.
pub fn summary(host: &Host) -> String {
    let count = |n: usize, what: &str| match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    };
    let tools = host.tool_names().entries().len();
    let prompts: usize = host.servers().iter().map(|s| s.prompts().len()).sum();
    let resources = host.attachables().len();
    format!(
        "{}, {}, {} from {} (/tools, /prompts, /resources list them; /servers, /mcp show the servers)",
        count(tools, "tool"),
        count(prompts, "prompt"),
        count(resources, "resource"),
        count(host.servers().len(), "server")
    )
}

/// The tools, as the model names them.
pub fn tools(host: &Host) -> Vec<String> {
    let names = host.tool_names();
    if names.entries().is_empty() {
        return vec!["no tools".to_owned()];
    }
    let mut lines = vec!["tools (as the model sees them):".to_owned()];
    lines.extend(names.entries().iter().map(|e| {
        let mut head = e.model_name.clone();
        if is_disguised(&e.tool.name) {
            head.push_str(&format!(
                " (! look-alike name: `{}`)",
                display::exact(&display::name(&e.tool.name))
            ));
        }
        with_description(head, e.tool.description.as_deref())
    }));
    lines
}

/// How a prompt is invoked: `/server:prompt <required> [optional]`.
pub fn command(server: &str, prompt: &Prompt) -> String {
    let mut text = format!("/{}:{}", display::name(server), display::name(&prompt.name));
    for argument in prompt.arguments.iter().flatten() {
        if argument.required == Some(true) {
            text.push_str(&format!(" <{}>", display::name(&argument.name)));
        } else {
            text.push_str(&format!(" [{}]", display::name(&argument.name)));
        }
    }
    text
}

/// The prompts, as slash commands.
pub fn prompts(host: &Host) -> Vec<String> {
    let mut lines = Vec::new();
    for server in host.servers().iter() {
        for prompt in server.prompts() {
            lines.push(with_description(
                command(&server.name, &prompt),
                prompt.description.as_deref(),
            ));
        }
    }
    if lines.is_empty() {
        return vec!["no slash commands (no server offers prompts)".to_owned()];
    }
    lines.insert(0, "slash commands (server prompts):".to_owned());
    lines
}

fn attachable(a: &Attachable) -> String {
    let mut head = display::line(&a.reference());
    if a.template {
        head.push_str(" (template: fill in the {braces})");
    }
    with_description(head, a.description.as_deref().or(Some(&a.name)))
}

/// The resources and templates that can be attached.
pub fn resources(host: &Host) -> Vec<String> {
    let all = host.attachables();
    if all.is_empty() {
        return vec!["no resources to attach".to_owned()];
    }
    let mut lines = vec!["resources to attach (@server:uri):".to_owned()];
    lines.extend(all.iter().map(attachable));
    lines
}

/// `/mcp`: each server's authorization (HTTP servers: who authorized it, scopes, expiry;
/// never a token), and whether it runs or stopped (then how to start it again).
pub fn authorization(host: &Host) -> Vec<String> {
    if host.servers().is_empty() {
        return vec!["no servers are connected".to_owned()];
    }
    let mut lines = vec!["status and authorization:".to_owned()];
    for server in host.servers().iter() {
        let state = match server.authorization() {
            None => "no authorization (not an HTTP server)".to_owned(),
            Some(status) => junction_host::auth::describe(status.as_ref()),
        };
        let name = display::name(&server.name);
        lines.push(format!("  {name}: {}", display::line(&state)));
        lines.extend(origin(host, &server.name));
        lines.push(match server.stopped() {
            Some(stopped) => format!(
                "    stopped: {} (/restart {name} starts it again)",
                display::line(&stopped.reason)
            ),
            None => format!("    running, protocol {}", server.client.protocol_version()),
        });
    }
    lines
}

/// The connected servers and what each offers; a stopped one with why and the end of its
/// stderr.
pub fn servers(host: &Host) -> Vec<String> {
    if host.servers().is_empty() {
        return vec!["no servers are connected".to_owned()];
    }
    let mut lines = vec!["servers:".to_owned()];
    for server in host.servers().iter() {
        if let Some(stopped) = server.stopped() {
            lines.push(format!(
                "  {}: stopped: {} (started again on the next call to it, or /restart {0})",
                display::name(&server.name),
                display::line(&stopped.reason)
            ));
            lines.extend(origin(host, &server.name));
            lines.extend(
                stopped
                    .stderr_tail
                    .iter()
                    .map(|l| format!("    | {}", display::line(l))),
            );
            continue;
        }
        let info = server.client.server_info();
        lines.push(format!(
            "  {}: {} {} (protocol {}){}, {} tools, {} prompts, {} resources",
            display::name(&server.name),
            display::name(&info.name),
            display::name(&info.version),
            server.client.protocol_version(),
            if server.trusted { ", trusted" } else { "" },
            server.tools().len(),
            server.prompts().len(),
            server.resources().len() + server.templates().len()
        ));
        lines.extend(origin(host, &server.name));
    }
    lines
}

/// Where server `name` was configured, as a line: `    from SCOPE FILE`; none for a server
/// the program connected itself.
fn origin(host: &Host, name: &str) -> Option<String> {
    let config = host.servers().config(name)?;
    Some(format!(
        "    from {} {}",
        config.scope,
        display::line(&config.source.display().to_string())
    ))
}

/// The servers that did not start, each with why and the end of its stderr; nothing when
/// every server started.
pub fn failed_servers(failures: &[junction_host::servers::StartFailure]) -> Vec<String> {
    if failures.is_empty() {
        return Vec::new();
    }
    let mut lines = vec!["servers that did not start:".to_owned()];
    for failure in failures {
        lines.push(format!(
            "  {}: {}",
            display::name(&failure.server),
            display::line(&failure.reason)
        ));
        lines.extend(
            failure
                .stderr_tail
                .iter()
                .map(|l| format!("    | {}", display::line(l))),
        );
    }
    lines
}
