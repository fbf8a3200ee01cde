"""Scripted live sessions: each agent's log written record by record, as the agent
writes it (shapes from the adapters' docstrings and the fixtures beside them), with
the status ``agentlog status --json`` must show after each step.

A script is a list of :class:`Step`: ``write`` changes the files (``ago`` seconds in
the past: records and file times are dated back, for the clock's statuses), then
``status`` (and ``inferred``) is what the board says.  ``process`` starts or stops
a stand-in for the agent's process (``sleep`` run as ``argv[0] = <program>``, in
the session's folder), the liveness evidence of :mod:`agentlog.live.procs`.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any


def iso(seconds_ago: float = 0.0) -> str:
    stamp = datetime.now(UTC) - timedelta(seconds=seconds_ago)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def ms(seconds_ago: float = 0.0) -> int:
    return int((time.time() - seconds_ago) * 1000)


def append(path: Path, *records: dict[str, Any], ago: float = 0.0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")
    backdate(path, ago)


def put(path: Path, value: Any, ago: float = 0.0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")
    backdate(path, ago)


def backdate(path: Path, ago: float) -> None:
    if ago:
        stamp = time.time() - ago
        os.utime(path, (stamp, stamp))


@dataclass
class Step:
    name: str
    write: Callable[[], None]
    status: str
    inferred: bool | None = None
    process: str | None = None  # "start" or "stop" the stand-in before writing


@dataclass
class Script:
    agent: str
    key: str
    program: str | None  # the process name liveness looks for (None: not looked for)
    steps: list[Step] = field(default_factory=list)


class Stand:
    """The stand-in agent process: ``sleep`` with ``argv[0]`` = the agent's program,
    running in ``cwd``."""

    def __init__(self, program: str, cwd: Path) -> None:
        self.program, self.cwd = program, cwd
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(["bash", "-c", f"exec -a {self.program} sleep 600"], cwd=self.cwd)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # until /proc shows the new name
            try:
                if Path(f"/proc/{self.proc.pid}/cmdline").read_bytes().startswith(self.program.encode()):
                    return
            except OSError:
                pass
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


# --- Claude Code -------------------------------------------------------------


def claude(home: Path, cwd: Path) -> Script:
    sid = "5e551011-aaaa-4bbb-8ccc-000000000001"
    path = home / ".claude/projects/-live-project" / f"{sid}.jsonl"
    n = [0]

    def rec(kind: str, message: dict[str, Any], ago: float = 0.0, **extra: Any) -> dict[str, Any]:
        n[0] += 1
        return {
            "type": kind,
            "sessionId": sid,
            "uuid": f"u{n[0]}",
            "parentUuid": f"u{n[0] - 1}" if n[0] > 1 else None,
            "timestamp": iso(ago),
            "cwd": str(cwd),
            "version": "2.0.30",
            "message": message,
            **extra,
        }

    def prompt(text: str, ago: float = 0.0) -> Callable[[], None]:
        return lambda: append(path, rec("user", {"role": "user", "content": text}, ago), ago=ago)

    def assistant(content: list[dict[str, Any]], stop: str | None, ago: float = 0.0) -> Callable[[], None]:
        def write() -> None:
            message = {
                "id": f"msg_{n[0] + 1}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": content,
                "stop_reason": stop,
                "usage": {"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 1000},
            }
            append(path, rec("assistant", message, ago, requestId=f"req_{n[0] + 1}"), ago=ago)

        return write

    def call(call_id: str, name: str, args: dict[str, Any], ago: float = 0.0) -> Callable[[], None]:
        return assistant([{"type": "tool_use", "id": call_id, "name": name, "input": args}], "tool_use", ago)

    def result(call_id: str, text: str = "ok") -> Callable[[], None]:
        content = [{"type": "tool_result", "tool_use_id": call_id, "content": text}]
        return lambda: append(path, rec("user", {"role": "user", "content": content}, toolUseResult={"stdout": text}))

    def api_error() -> None:
        message = {
            "id": "err1",
            "role": "assistant",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": "API Error: 500 overloaded"}],
        }
        append(path, rec("assistant", message, isApiErrorMessage=True))

    def interrupt() -> None:
        content = [{"type": "text", "text": "[Request interrupted by user]"}]
        append(path, rec("user", {"role": "user", "content": content}))

    done = [{"type": "text", "text": "All tests pass."}]
    return Script(
        "claude_code",
        f"claude_code:{sid}",
        "claude",
        [
            Step("prompt", prompt("fix the failing test"), "working", process="start"),
            Step("bash call", call("toolu_1", "Bash", {"command": "pytest -q"}), "running_tool"),
            Step("bash result", result("toolu_1"), "working"),
            Step("task call", call("toolu_2", "Task", {"prompt": "look around", "description": "explore"}), "waiting_for_subagents"),
            Step("task result", result("toolu_2", "found it"), "working"),
            Step("edit waits 30 s", call("toolu_3", "Edit", {"file_path": "a.py"}, ago=30), "needs_you", inferred=True),
            Step("edit result", result("toolu_3"), "working"),
            Step("question", call("toolu_4", "AskUserQuestion", {"questions": []}), "needs_you", inferred=False),
            Step("answer", result("toolu_4", "option A"), "working"),
            Step("end_turn", assistant(done, "end_turn"), "waiting_for_user", inferred=False),
            Step("prompt 2", prompt("again"), "working"),
            Step("api error", api_error, "errored"),
            Step("prompt 3", prompt("again please"), "working"),
            Step("interrupted", interrupt, "interrupted"),
            Step("prompt 4", prompt("one more"), "working"),
            Step("end_turn, process gone", assistant(done, "end_turn"), "done", inferred=True, process="stop"),
            Step("prompt 40 min ago", prompt("a long one", ago=2400), "stale", inferred=True),
        ],
    )


# --- Codex ---------------------------------------------------------------------


def codex(home: Path, cwd: Path) -> Script:
    sid = "019ad000-0000-7000-8000-00000000c0de"
    path = home / ".codex/sessions/2026/12/01" / f"rollout-2026-12-01T10-00-00-{sid}.jsonl"

    def line(kind: str, payload: dict[str, Any], ago: float = 0.0) -> dict[str, Any]:
        return {"timestamp": iso(ago), "type": kind, "payload": payload}

    def start() -> None:
        append(
            path,
            line("session_meta", {"id": sid, "timestamp": iso(), "cwd": str(cwd), "originator": "codex_cli_rs", "cli_version": "0.64.0"}),
            line("turn_context", {"cwd": str(cwd), "approval_policy": "on-request", "model": "gpt-5.1-codex"}),
        )

    def prompt(text: str) -> Callable[[], None]:
        return lambda: append(
            path,
            line("event_msg", {"type": "task_started"}),
            line("event_msg", {"type": "user_message", "message": text, "images": []}),
            line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
        )

    def call(call_id: str, name: str, args: dict[str, Any]) -> Callable[[], None]:
        payload = {"type": "function_call", "name": name, "arguments": json.dumps(args), "call_id": call_id}
        return lambda: append(path, line("response_item", payload))

    def output(call_id: str, text: str = "ok") -> Callable[[], None]:
        return lambda: append(path, line("response_item", {"type": "function_call_output", "call_id": call_id, "output": text}))

    def answer() -> None:
        text = "Done."
        append(
            path,
            line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}),
            line("event_msg", {"type": "agent_message", "message": text}),
            line("event_msg", {"type": "task_complete", "last_agent_message": text}),
        )

    return Script(
        "codex",
        f"codex:{sid}",
        "codex",
        [
            Step("session start", start, "unknown", process="start"),
            Step("prompt", prompt("add a test"), "working"),
            Step("exec call", call("call_1", "exec_command", {"cmd": "pytest"}), "running_tool"),
            Step("exec output", output("call_1"), "working"),
            Step("question", call("call_2", "request_user_input", {"questions": []}), "needs_you"),
            Step("answer", output("call_2", "yes"), "working"),
            Step("task_complete", answer, "waiting_for_user", inferred=False),
            Step("prompt 2", prompt("and another"), "working"),
            Step("turn_aborted", lambda: append(path, line("event_msg", {"type": "turn_aborted", "reason": "interrupted"})), "interrupted"),
            Step("prompt 3", prompt("last one"), "working"),
            Step("task_complete, process gone", answer, "done", inferred=True, process="stop"),
        ],
    )


# --- Gemini CLI ----------------------------------------------------------------


def gemini(home: Path, cwd: Path) -> Script:
    sid = "a1b2c3d4-1111-4000-8000-00000000aaaa"
    path = home / ".gemini/tmp/live0hash/chats" / f"session-2026-12-01T10-00-{sid[:8]}.jsonl"

    def meta() -> None:
        append(path, {"sessionId": sid, "projectHash": "live0hash", "startTime": iso(), "lastUpdated": iso(), "kind": "main"})

    def user(mid: str, text: str) -> Callable[[], None]:
        return lambda: append(path, {"id": mid, "timestamp": iso(), "type": "user", "content": [{"text": text}]})

    def reply(mid: str, calls: list[dict[str, Any]], text: str = "", ago: float = 0.0) -> Callable[[], None]:
        record = {"id": mid, "timestamp": iso(ago), "type": "gemini", "content": text, "model": "gemini-2.5-pro", "toolCalls": calls}
        return lambda: append(path, record, ago=ago)

    def tool(call_id: str, name: str, status: str, result: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"id": call_id, "name": name, "args": {"path": "a.py"}, "status": status, "timestamp": iso()}
        if result:
            out["result"] = [{"functionResponse": {"id": call_id, "name": name, "response": {"output": "done"}}}]
        return out

    def error() -> None:
        append(path, {"id": "e1", "timestamp": iso(), "type": "error", "content": "[API Error: quota exceeded]"})

    return Script(
        "gemini_cli",
        f"gemini_cli:{sid}",
        None,  # Gemini records no folder: its process cannot be matched
        [
            Step("prompt", lambda: (meta(), user("u1", "list the files")()), "working"),
            Step("shell executing", reply("a1", [tool("c1", "run_shell_command", "executing")]), "running_tool"),
            Step("shell done (same record again)", reply("a1", [tool("c1", "run_shell_command", "success", True)]), "working"),
            Step("reply", reply("a2", [], "Two files."), "waiting_for_user", inferred=True),
            Step("prompt 2", user("u2", "read a.py"), "working"),
            Step("read pending 30 s", reply("a3", [tool("c2", "read_file", "executing")], ago=30), "needs_you", inferred=True),
            Step("api error", error, "errored"),
        ],
    )


# --- OpenCode (the JSON tree of versions before 1.2) --------------------------


def opencode(home: Path, cwd: Path) -> Script:
    sid = "ses_live0001"
    root = home / ".local/share/opencode/storage"
    created = ms()

    def session() -> None:
        put(
            root / "session/proj_live" / f"{sid}.json",
            {"id": sid, "version": "1.1.0", "projectID": "proj_live", "directory": str(cwd), "title": "Live", "time": {"created": created, "updated": ms()}},
        )

    def message(mid: str, role: str) -> None:
        put(
            root / "message" / sid / f"{mid}.json",
            {"id": mid, "sessionID": sid, "role": role, "time": {"created": ms()}, "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}},
        )

    def part(mid: str, pid: str, value: dict[str, Any]) -> None:
        put(root / "part" / mid / f"{pid}.json", {"id": pid, "sessionID": sid, "messageID": mid, **value})

    def tool(call_id: str, name: str, status: str) -> dict[str, Any]:
        state: dict[str, Any] = {"status": status, "input": {"command": "ls"}, "time": {"start": ms()}}
        if status == "completed":
            state.update(output="a.txt\n", time={"start": ms(), "end": ms()})
        return {"type": "tool", "callID": call_id, "tool": name, "state": state}

    def prompt() -> None:
        session()
        message("msg_001", "user")
        part("msg_001", "prt_001", {"type": "text", "text": "list the files"})

    return Script(
        "opencode",
        f"opencode:{sid}",
        "opencode",
        [
            Step("prompt", prompt, "working", process="start"),
            Step("bash running", lambda: (message("msg_002", "assistant"), part("msg_002", "prt_002", tool("call_1", "bash", "running"))), "running_tool"),
            Step("bash completed", lambda: part("msg_002", "prt_002", tool("call_1", "bash", "completed")), "working"),
            Step("question pending", lambda: part("msg_002", "prt_003", tool("call_2", "question", "running")), "needs_you"),
            Step(
                "answered, reply",
                lambda: (part("msg_002", "prt_003", tool("call_2", "question", "completed")), part("msg_002", "prt_004", {"type": "text", "text": "Done."})),
                "waiting_for_user",
                inferred=True,
            ),
            Step("process gone", lambda: None, "done", inferred=True, process="stop"),
        ],
    )


# --- Cline (VS Code extension task folder) ------------------------------------


def cline(home: Path, cwd: Path) -> Script:
    task = "1764583200000"
    folder = home / ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks" / task
    api: list[dict[str, Any]] = []
    ui: list[dict[str, Any]] = []

    def save(api_add: list[dict[str, Any]], ui_add: list[dict[str, Any]]) -> Callable[[], None]:
        def write() -> None:
            api.extend(api_add)
            ui.extend(ui_add)
            put(folder / "ui_messages.json", ui)
            put(folder / "api_conversation_history.json", api)

        return write

    def say(kind: str, text: str = "") -> dict[str, Any]:
        return {"ts": ms(), "type": "say", "say": kind, "text": text}

    def ask(kind: str, text: str = "") -> dict[str, Any]:
        return {"ts": ms(), "type": "ask", "ask": kind, "text": text}

    def use(call_id: str, name: str) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name, "input": {"path": "README.md"}}]}

    def result(call_id: str) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "ok"}]}

    prompt = {"role": "user", "content": [{"type": "text", "text": "<task>\nfix the typo\n</task>"}]}
    usage = say("api_req_started", json.dumps({"tokensIn": 10, "tokensOut": 20, "cacheWrites": 0, "cacheReads": 0, "cost": 0.001}))
    return Script(
        "cline",
        f"cline:{task}",
        None,  # Cline runs inside the editor: no process of its own
        [
            Step("task", save([prompt], [say("text", "fix the typo"), usage]), "working"),
            Step("read asks approval", save([use("toolu_1", "read_file")], [ask("tool", '{"tool":"readFile"}')]), "needs_you"),
            Step("approved, result", save([result("toolu_1")], [usage]), "working"),
            Step("follow-up question", save([use("toolu_2", "ask_followup_question")], [ask("followup", "which file?")]), "needs_you"),
            Step("answered", save([result("toolu_2")], [usage]), "working"),
            Step(
                "completion",
                save([{"role": "assistant", "content": [{"type": "text", "text": "Fixed."}]}], [ask("completion_result", "Fixed.")]),
                "done",
                inferred=False,
            ),
        ],
    )


# --- Mistral Vibe (the unified store) ------------------------------------------


def mistral_vibe(home: Path, cwd: Path) -> Script:
    sid = "sess-live-0001"
    folder = home / ".vibe/logs/session/unified" / sid
    journal = folder / "journal/0000000000000001.jsonl"
    seq = [0]
    created = ms()

    def envelope(status: str) -> dict[str, Any]:
        return {
            "createdAt": created,
            "id": sid,
            "parentSessionId": None,
            "rootSessionId": sid,
            "status": {"type": status},
            "title": "Live vibe",
            "updatedAt": ms(),
        }

    def store() -> None:
        put(folder / "CURRENT", {"generation": "0000000000000001", "session_id": sid, "snapshot_sequence": 0, "store_format": "mistral.vibe.unified-session-store/v1", "store_format_minor": 7})
        put(
            folder / "generations/0000000000000001/manifest.json",
            {
                "generation": "0000000000000001",
                "session_id": sid,
                "snapshot_sequence": 0,
                "projection_state": {"path": "projection-state.json"},
                "recovery_journal_segment": {"first_sequence": 1, "path": "journal/0000000000000001.jsonl"},
            },
        )
        put(
            folder / "generations/0000000000000001/projection-state.json",
            {"projection_state_version": 1, "session_id": sid, "snapshot": {"history": {"entries": []}, "session": envelope("running")}, "snapshot_sequence": 0, "watermark": 0},
        )

    def ops(*delta: dict[str, Any]) -> Callable[[], None]:
        def write() -> None:
            seq[0] += 1
            append(journal, {"type": "projection_delta", "sequence": seq[0], "payload": {"delta": list(delta), "watermark": seq[0]}})

        return write

    def entry(eid: str, value: dict[str, Any], op: str = "append_entry") -> dict[str, Any]:
        return {"op": op, "id": eid, "entry": {"id": eid, "sessionId": sid, "turnId": "t1", "createdAt": ms(), "updatedAt": ms(), **value}}

    def message(eid: str, role: str, text: str) -> dict[str, Any]:
        return entry(eid, {"type": "message", "role": role, "content": [{"type": "text", "text": text}], "source": "turn_start" if role == "user" else "harness"})

    def effect(eid: str, status: str, op: str = "append_entry") -> dict[str, Any]:
        state: dict[str, Any] = {"status": status}
        if status == "completed":
            state["outputText"] = "12\n"
        return entry(eid, {"type": "effect", "title": "bash", "detail": {"kind": "tool", "toolName": "file_system.bash", "input": {"command": "ls"}}, "state": state}, op)

    def status(kind: str) -> dict[str, Any]:
        return {"op": "set_envelope", "state": {"session": envelope(kind)}}

    return Script(
        "mistral_vibe",
        f"mistral_vibe:{sid}",
        None,  # the unified store records no folder
        [
            Step("prompt", lambda: (store(), ops(message("user-1", "user", "count the files"))()), "working"),
            Step("bash running", ops(effect("effect-1", "running")), "running_tool"),
            Step("blocked on approval", ops(status("blocked")), "needs_you"),
            Step("approved, done", ops(status("running"), effect("effect-1", "completed", "replace_entry")), "working"),
            Step("reply, idle", ops(message("assistant-1", "assistant", "12 files."), status("idle")), "waiting_for_user", inferred=False),
            Step("failed", ops(status("failed")), "errored"),
        ],
    )


# --- Kimi CLI ------------------------------------------------------------------


def kimi(home: Path, cwd: Path) -> Script:
    sid = "6f1c2a3e-0000-4c55-9a0e-00000000beef"
    folder = home / ".kimi/sessions/0123456789abcdef0123456789abcdef" / sid
    context, wire = folder / "context.jsonl", folder / "wire.jsonl"

    def event(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": time.time(), "message": {"type": kind, "payload": payload}}

    def both(ctx: list[dict[str, Any]], events: list[dict[str, Any]]) -> Callable[[], None]:
        def write() -> None:
            if not wire.exists():
                append(wire, {"type": "metadata", "protocol_version": "1.10"})
            if ctx:
                append(context, *ctx)
            if events:
                append(wire, *events)
            if not context.exists():
                append(context)

        return write

    shell = {"type": "function", "id": "tool_1", "function": {"name": "Shell", "arguments": '{"command": "rm b.txt"}'}}
    return Script(
        "kimi",
        f"kimi:{sid}",
        None,  # the folder is only known from kimi.json's work_dirs
        [
            Step("prompt", both([{"role": "user", "content": [{"type": "text", "text": "delete b.txt"}]}], [event("TurnBegin", {"user_input": "delete b.txt"})]), "working"),
            Step(
                "shell call",
                both([{"role": "assistant", "content": [{"type": "text", "text": "Deleting."}], "tool_calls": [shell]}], [event("ToolCall", shell)]),
                "running_tool",
            ),
            Step("approval request", both([], [event("ApprovalRequest", {"id": "ap1", "tool_call_id": "tool_1", "sender": "Shell", "action": "run shell command", "description": "rm b.txt"})]), "needs_you"),
            Step(
                "approved, result",
                both(
                    [{"role": "tool", "content": [{"type": "text", "text": "done"}], "tool_call_id": "tool_1"}],
                    [event("ApprovalRequestResolved", {"request_id": "ap1", "response": "approve"}), event("ToolResult", {"tool_call_id": "tool_1", "return_value": {"is_error": False, "output": "done"}})],
                ),
                "working",
            ),
            Step("turn end", both([{"role": "assistant", "content": [{"type": "text", "text": "Deleted."}]}], [event("TurnEnd", {})]), "waiting_for_user", inferred=False),
            Step("interrupted", both([{"role": "user", "content": [{"type": "text", "text": "now c.txt"}]}], [event("TurnBegin", {"user_input": "now c.txt"}), event("StepInterrupted", {})]), "interrupted"),
        ],
    )


SCRIPTS: dict[str, Callable[[Path, Path], Script]] = {
    "claude_code": claude,
    "codex": codex,
    "gemini_cli": gemini,
    "opencode": opencode,
    "cline": cline,
    "mistral_vibe": mistral_vibe,
    "kimi": kimi,
}
"""The scripted agents, by slug (the issue's seven)."""
