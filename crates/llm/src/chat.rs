//! Qwen2.5's chat template (`tokenizer.chat_template` in the GGUF metadata), for chats
//! without tool calls: a system turn first (Qwen's default when the chat has none),
//! each turn as `<|im_start|>role\ncontent<|im_end|>\n`, then the assistant's turn opened.

use serde::{Deserialize, Serialize};

/// Who says a message of a chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }
}

/// The system turn the template inserts when a chat does not start with one.
pub const DEFAULT_SYSTEM: &str = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";

/// Ends a turn; the model ends its answer with it.
pub const END_OF_TURN: &str = "<|im_end|>";

/// The prompt that asks the model for the assistant's next turn.
pub fn chat_prompt(messages: &[ChatMessage]) -> String {
    let mut prompt = String::new();
    let mut turn = |role: Role, content: &str| {
        prompt.push_str("<|im_start|>");
        prompt.push_str(role.as_str());
        prompt.push('\n');
        prompt.push_str(content);
        prompt.push_str(END_OF_TURN);
        prompt.push('\n');
    };
    if messages.first().is_none_or(|m| m.role != Role::System) {
        turn(Role::System, DEFAULT_SYSTEM);
    }
    // A last assistant turn is the start of the answer (a prefill): left open, the model
    // continues it.
    let (open, closed) = match messages.split_last() {
        Some((last, rest)) if last.role == Role::Assistant => (Some(last), rest),
        _ => (None, messages),
    };
    for message in closed {
        turn(message.role, &message.content);
    }
    prompt.push_str("<|im_start|>assistant\n");
    if let Some(prefill) = open {
        prompt.push_str(&prefill.content);
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_without_a_system_turn_gets_qwens() {
        let prompt = chat_prompt(&[ChatMessage::new(Role::User, "Hi")]);
        assert!(prompt.starts_with(&format!("<|im_start|>system\n{DEFAULT_SYSTEM}<|im_end|>\n")));
        assert!(prompt.ends_with("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
        let own = chat_prompt(&[
            ChatMessage::new(Role::System, "Be brief."),
            ChatMessage::new(Role::User, "Hi"),
        ]);
        assert!(!own.contains(DEFAULT_SYSTEM));
    }

    #[test]
    fn a_last_assistant_turn_is_left_open_for_the_model_to_continue() {
        let prompt = chat_prompt(&[
            ChatMessage::new(Role::User, "Write code."),
            ChatMessage::new(Role::Assistant, "```python\n"),
        ]);
        assert!(
            prompt.ends_with("<|im_start|>user\nWrite code.<|im_end|>\n<|im_start|>assistant\n```python\n"),
            "{prompt}"
        );
        assert_eq!(prompt.matches("<|im_start|>assistant").count(), 1);
    }
}
