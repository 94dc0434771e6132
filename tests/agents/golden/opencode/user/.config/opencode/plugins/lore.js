// lore for OpenCode: the project's memory in the system prompt, before the first answer, and a
// handoff when a session goes idle (its last reply, for the next agent here).
// Written by `lore install opencode`; `lore uninstall opencode` removes it. OpenCode has no shell
// session-start hook, so this plugin asks lore's hook for the text (plain, already fenced as
// reference data) once per session and adds it to that session's system messages.
import { spawn } from "node:child_process";

const LORE = "/opt/lore/.venv/bin/lore";
const TIMEOUT_MS = 5000;

function sessionStart(directory, sessionID) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(LORE, ["hook", "session-start", "--client", "opencode"], {
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      resolve("");
      return;
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
    child.on("error", () => {
      clearTimeout(timer);
      resolve("");
    });
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? out.trim() : "");
    });
    const input = {
      session_id: sessionID,
      cwd: directory,
      hook_event_name: "SessionStart",
      source: "startup",
    };
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
  });
}

// `opencode run` exits as soon as the session is idle: the hook runs detached so that it finishes
// (within its own 0.9 s deadline) after OpenCode is gone. Nothing is waited for, nothing printed.
function sessionEnd(directory, sessionID, reply, startedAt) {
  try {
    const child = spawn(LORE, ["hook", "session-end", "--client", "opencode"], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    const input = {
      session_id: sessionID,
      cwd: directory,
      hook_event_name: "session.idle",
      last_assistant_message: reply ?? null,
      started_at: startedAt ?? null,
    };
    child.stdin.end(JSON.stringify(input));
    child.unref();
  } catch {
    // lore gone or not executable: no handoff, and OpenCode carries on
  }
}

function remember(map, key, value) {
  if (map.size > 100) map.clear();
  map.set(key, value);
}

export const LoreMemory = async ({ directory }) => {
  const memory = new Map(); // session id -> Promise<string>: asked once, stable for the session
  const replies = new Map(); // session id -> the agent's last completed text
  const started = new Map(); // session id -> when this plugin first saw it (ISO 8601)
  return {
    "experimental.chat.system.transform": async (input, output) => {
      const key = input?.sessionID ?? "";
      if (!memory.has(key)) {
        remember(memory, key, sessionStart(directory, key));
        if (!started.has(key)) remember(started, key, new Date().toISOString());
      }
      const text = await memory.get(key);
      if (text) output.system.push(text);
    },
    "experimental.text.complete": async (input, output) => {
      const key = input?.sessionID;
      if (key && typeof output?.text === "string" && output.text.trim()) remember(replies, key, output.text);
    },
    event: async ({ event }) => {
      const key = event?.properties?.sessionID;
      if (event?.type === "session.idle" && key) sessionEnd(directory, key, replies.get(key), started.get(key));
    },
  };
};
