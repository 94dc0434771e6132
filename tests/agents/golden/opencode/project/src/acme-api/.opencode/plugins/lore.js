// lore for OpenCode: the project's memory in the system prompt, before the first answer.
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

export const LoreMemory = async ({ directory }) => {
  const memory = new Map(); // session id -> Promise<string>: asked once, stable for the session
  return {
    "experimental.chat.system.transform": async (input, output) => {
      const key = input?.sessionID ?? "";
      if (!memory.has(key)) {
        if (memory.size > 100) memory.clear();
        memory.set(key, sessionStart(directory, key));
      }
      const text = await memory.get(key);
      if (text) output.system.push(text);
    },
  };
};
