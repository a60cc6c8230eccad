//! The output schemas of the tools the server listed, and the check of `structuredContent`
//! against them (tools section of 2025-06-18 and later: "clients SHOULD validate structured
//! results against the output schema").

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use junction_protocol::tools::{CallToolResult, Tool};

use crate::schema::CompiledSchema;
use crate::sync::lock;

/// A tool's output schema, compiled once; or why it could not be compiled.
type Entry = Arc<Result<CompiledSchema, String>>;

/// The output schemas from the last `tools/list`, by tool name.
#[derive(Debug, Default)]
pub(super) struct OutputSchemas {
    by_tool: Mutex<HashMap<String, Entry>>,
}

impl OutputSchemas {
    /// Replaces what is known with the schemas of `tools` (a complete listing).
    pub(super) fn remember(&self, tools: &[Tool]) {
        let compiled = tools
            .iter()
            .filter_map(|tool| {
                let schema = tool.output_schema.clone()?;
                let entry = CompiledSchema::new(schema).map_err(|e| e.to_string());
                Some((tool.name.clone(), Arc::new(entry)))
            })
            .collect();
        *lock(&self.by_tool) = compiled;
    }

    /// Checks the result of calling `tool`. Error results, and tools without a known output
    /// schema, pass.
    pub(super) fn check(&self, tool: &str, result: &CallToolResult) -> Result<(), String> {
        if result.failed() {
            return Ok(());
        }
        let Some(entry) = lock(&self.by_tool).get(tool).cloned() else {
            return Ok(());
        };
        let schema = match entry.as_ref() {
            Ok(schema) => schema,
            Err(why) => {
                return Err(format!(
                    "the outputSchema of tool `{tool}` cannot be used to check its result: {why}"
                ))
            }
        };
        let Some(structured) = &result.structured_content else {
            return Err(format!(
                "tool `{tool}` declares an outputSchema but its result has no structuredContent"
            ));
        };
        schema.check_value(structured).map_err(|problems| {
            format!(
                "the structuredContent of tool `{tool}` does not match its outputSchema: {}",
                problems.join("; ")
            )
        })
    }
}
