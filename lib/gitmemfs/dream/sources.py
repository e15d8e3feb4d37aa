"""`--from` sources: read a transcript, cut the slice not yet reflected on, normalise it.

Two source types (reference/upstream-reflection.md §5.4):

- `transcript:FILE.jsonl` — one JSON object per line with a `kind`
  (user, assistant, reasoning, error, tool_call) and `text` or tool fields;
- `openhands:DIR|FILE` — an OpenHands conversation: an events folder of
  `event-<n>-*.json` files, a JSON array of events, or `{"items": [...]}`;
  or a store folder of conversations. Each action and its result are one row.

Both become rows of the transcript shape; the cursor (the id of the last
user/assistant row a consuming dream saw) selects the rows after it
(§3.3). Where upstream differs on purpose (§8): a row without a message id gets
a content-hash id, so re-reading a source never repeats it (11); the source key
is the real path, so `./a.jsonl` and `/abs/a.jsonl` share a cursor (12); a
named source that does not exist is an error, not "nothing new" (21).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable

from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.dream import sources_agents as agents

TYPES = ("claude-code", "codex", "openhands", "transcript")
SESSION_TYPES = ("claude-code", "codex")  # a folder of these is one cursor per session file
ARGS_LIMIT = 300
RESULT_LIMIT = 2500
OPENHANDS_RESULT_LIMIT = 4000
CANONICAL = ("user", "assistant")
_NOISE = ("<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
          "<local-command-stderr>", "<system-reminder>")


@dataclass
class Source:
    kind: str
    locator: str
    path: str          # the real path (the cursor key)

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.path}"


@dataclass
class Slice:
    source: Source
    rows: list[dict[str, Any]]
    start_id: str
    end_id: str
    total_rows: int
    cursor_found: bool = True
    notes: list[str] = field(default_factory=list)
    cursor_before: str | None = None
    skipped: int = 0                                       # malformed lines left out
    parts: list[Slice] = field(default_factory=list)       # one per session file (a folder, auto)

    @property
    def messages(self) -> int:
        return sum(1 for r in self.rows if r.get("kind") in CANONICAL)


def parse(spec: str, project: str | None = None) -> Source:
    kind, colon, locator = spec.partition(":")
    if kind.strip() == "auto":
        # Every new Claude Code and Codex session of a project (auto:DIR; default: dream.project,
        # else the current directory).
        where = os.path.expanduser(locator.strip()) if colon and locator.strip() else (project or os.getcwd())
        return Source("auto", "auto", os.path.realpath(where))
    if not colon:
        raise UsageError(f'invalid --from "{spec}": use transcript:FILE.jsonl, openhands:DIR|FILE, '
                         'claude-code:DIR|FILE, codex:DIR|FILE or auto')
    if kind not in TYPES:
        raise UsageError(f'unknown source type "{kind}". Supported: {", ".join(TYPES)}')
    if not locator.strip():
        raise UsageError(f'invalid --from "{spec}": missing path after "{kind}:"')
    path = os.path.realpath(os.path.expanduser(locator.strip()))
    if not os.path.exists(path):
        raise MemfsError(f"git dream: --from {spec}: no such file or directory: {path}")
    return Source(kind, locator, path)


def load(source: Source) -> list[dict[str, Any]]:
    """The source's rows, each with an `id` (its message id, or a content hash)."""
    return read(source)[0]


def read(source: Source) -> tuple[list[dict[str, Any]], int]:
    """The rows of one file source with their ids, and how many malformed lines were skipped."""
    if source.kind in SESSION_TYPES:
        reader = agents.claude_code if source.kind == "claude-code" else agents.codex
        try:
            parsed = reader(source.path)
        except OSError as exc:
            raise MemfsError(f"git dream: {exc}") from None
        return assign_ids(parsed.rows), parsed.skipped
    rows = transcript_rows(source.path) if source.kind == "transcript" else openhands_rows(source.path)
    return assign_ids(rows), 0


def sessions_of(source: Source, since: float | None = None, known: Any = ()) -> list[Source]:
    """The session files a folder or `auto` source stands for, each its own source (and
    cursor key). `auto` leaves out sessions neither `known` (they have a cursor) nor
    written to since `since` (the last dream)."""
    if source.kind == "auto":
        found = [Source(kind, path, os.path.realpath(path)) for kind, path in agents.project_sessions(source.path)]
        if since is not None:
            found = [s for s in found if s.key in known or os.path.getmtime(s.path) >= since]
        return found
    files = agents.session_files(source.kind, source.path)
    if not files:
        raise MemfsError(f"git dream: no {source.kind} session files found in {source.path}")
    return [Source(source.kind, path, os.path.realpath(path)) for path in files]


def slice_for(source: Source, cursors: dict[str, Any], since: float | None = None,
              reread: bool = False) -> Slice | None:
    """The new content of a source past its cursor(s), or None. A single file has one
    cursor; a folder of sessions or `auto` has one per session file, kept in `parts`.
    `reread`: from where the last consuming dream began instead (what it read, and
    anything new); the cursor it then moves from is still the current one."""
    several = source.kind == "auto" or (source.kind in SESSION_TYPES and os.path.isdir(source.path))
    if not several:
        rows, skipped = read(source)
        entry = cursors.get(source.key) or {}
        cursor = entry.get("cursor")
        chosen = select(source, rows, entry.get("previous") if reread else cursor)
        if chosen is not None:
            chosen.cursor_before, chosen.skipped = cursor, skipped
            if skipped:
                chosen.notes.append(f"skipped {skipped} malformed line(s) in {source.path}")
        return chosen
    parts = []
    for session in sessions_of(source, since, cursors):
        part = slice_for(session, cursors, reread=reread)
        if part is not None:
            parts.append(part)
    if not parts:
        return None
    rows = [r for p in parts for r in p.rows]
    return Slice(source, rows, parts[0].start_id, parts[-1].end_id, sum(p.total_rows for p in parts),
                 all(p.cursor_found for p in parts), [n for p in parts for n in p.notes],
                 skipped=sum(p.skipped for p in parts), parts=parts)


# -- transcript:FILE.jsonl ---------------------------------------------------------------

def transcript_rows(path: str) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise MemfsError(f"git dream: cannot read transcript {path}: {exc}") from None
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict) or "kind" not in row:
            raise MemfsError(f"git dream: could not parse a JSONL transcript row in {path} (line {number}): "
                             "each line must be a JSON object with a \"kind\"")
        if row.get("kind") != "tool_call" and not (isinstance(row.get("text"), str) and row["text"].strip()):
            continue
        rows.append(row)
    return rows


# -- openhands:DIR|FILE ------------------------------------------------------------------

_EVENT_FILE = re.compile(r"^event-(\d+)-.*\.json$")


def openhands_rows(path: str) -> list[dict[str, Any]]:
    return [row for events in read_conversations(path) for row in convert_openhands(events)]


def _events_folder(path: str) -> str | None:
    """The events folder of a conversation folder (its `events/`, or itself), or None
    when neither holds an event file."""
    for folder in (os.path.join(path, "events"), path):
        try:
            if any(_EVENT_FILE.match(name) for name in os.listdir(folder)):
                return folder
        except OSError:
            continue
    return None


def _read_events(folder: str) -> list[dict[str, Any]]:
    files = sorted((int(m.group(1)), name) for name in os.listdir(folder) if (m := _EVENT_FILE.match(name)))
    events = []
    for _, name in files:
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                event = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def read_conversations(path: str) -> list[list[dict[str, Any]]]:
    """Each conversation's events: one for a conversation folder or file; for a store
    folder of conversations, each in turn (oldest first, as Letta orders them), so a
    result only ever answers an action of its own conversation."""
    if os.path.isdir(path):
        folder = _events_folder(path)
        if folder is not None:
            return [_read_events(folder)]
        found = []
        for name in sorted(os.listdir(path)):
            child = os.path.join(path, name)
            inner = _events_folder(child) if os.path.isdir(child) else None
            if inner is not None:
                events = _read_events(inner)
                if events:  # a conversation with no readable event is skipped, as Letta does
                    found.append((os.stat(inner).st_mtime, name, events))
        if not found:
            raise MemfsError(f"git dream: no OpenHands event files (event-*.json) found in {path}")
        return [events for _mtime, _name, events in sorted(found, key=lambda item: (item[0], item[1]))]
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise MemfsError(f"git dream: cannot read {path}: {exc.strerror}") from None
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data = data["items"]
    if not isinstance(data, list):
        raise MemfsError(f'git dream: could not parse {path}: expected a JSON array of events or {{"items": [...]}}')
    return [[e for e in data if isinstance(e, dict)]]


def _texts(items: Any) -> str:
    if not isinstance(items, list):
        return ""
    return "".join(i.get("text", "") for i in items
                   if isinstance(i, dict) and i.get("type") == "text" and isinstance(i.get("text"), str))


def _object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _stamp(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        return iso(time.time())
    text = value.strip()
    if text.endswith("Z") or re.search(r"[+-]\d\d:?\d\d$", text):
        return text
    return text + "Z"


def _call_id(event: dict[str, Any]) -> str:
    """An action's tool call id: its own `tool_call_id`, else its `tool_call`'s id."""
    for value in (event.get("tool_call_id"), _object(event.get("tool_call")).get("id")):
        if isinstance(value, str) and value:
            return value
    return ""


def _observed(obs: dict[str, Any]) -> str:
    """An observation's text: its text items (or a plain string from older SDKs)."""
    content = obs.get("content")
    return content if isinstance(content, str) else _texts(content)


def convert_openhands(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An action and the result that answers it (an observation, an agent error, a
    rejection) become one tool call; the result is found by the call id either side
    carries, else by the action's event id (`action_id`)."""
    results: dict[str, tuple[str, bool]] = {}
    for event in events:
        kind = event.get("kind")
        if kind == "ObservationEvent":
            obs = _object(event.get("observation"))
            outcome = (_observed(obs), obs.get("is_error") is not True)
        elif kind == "AgentErrorEvent":
            outcome = (str(event.get("error") or ""), False)
        elif kind == "UserRejectObservation":
            outcome = (str(event.get("rejection_reason") or ""), False)
        else:
            continue
        for key in (event.get("tool_call_id"), event.get("action_id")):
            if isinstance(key, str) and key:
                results[key] = outcome
    rows: list[dict[str, Any]] = []
    for event in events:
        event_id = event.get("id")
        if not isinstance(event_id, str) or not event_id:
            continue
        at = _stamp(event.get("timestamp"))
        kind = event.get("kind")
        if kind == "MessageEvent" and event.get("source") in ("user", "agent"):
            message = _object(event.get("llm_message"))
            text = _texts(message.get("content"))
            if text.strip():
                rows.append({"kind": "user" if event["source"] == "user" else "assistant", "text": text,
                             "captured_at": at, "source_message_id": event_id})
        elif kind == "ActionEvent":
            thought = _texts(event.get("thought"))
            if thought.strip():
                rows.append({"kind": "assistant", "text": thought, "captured_at": at,
                             "source_message_id": f"{event_id}:thought"})
            row: dict[str, Any] = {"kind": "tool_call", "name": event.get("tool_name"), "captured_at": at,
                                   "source_message_id": event_id}
            call = _object(event.get("tool_call"))
            if isinstance(call.get("arguments"), str) and call["arguments"]:
                row["argsText"] = call["arguments"]
            elif isinstance(event.get("action"), dict):
                row["argsText"] = json.dumps({k: v for k, v in event["action"].items() if k != "kind"},
                                             separators=(",", ":"), ensure_ascii=False)
            found = results.get(_call_id(event)) or results.get(event_id)
            if found is not None:
                text, ok = found
                if len(text) > OPENHANDS_RESULT_LIMIT:
                    text = text[:OPENHANDS_RESULT_LIMIT] + "… [truncated]"
                row["resultText"], row["resultOk"] = text, ok
            rows.append(row)
    return rows


# -- ids, cursor, slice --------------------------------------------------------------------

def assign_ids(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, int] = {}
    for row in rows:
        given = row.get("source_message_id")
        if isinstance(given, str) and given.strip():
            row["id"] = given.strip()
            continue
        basis = json.dumps([row.get("kind"), row.get("text"), row.get("name"), row.get("argsText"),
                            row.get("captured_at")], ensure_ascii=False)
        digest = "h:" + hashlib.sha1(basis.encode()).hexdigest()[:16]
        seen[digest] = seen.get(digest, 0) + 1
        row["id"] = digest if seen[digest] == 1 else f"{digest}#{seen[digest]}"
    return rows


def select(source: Source, rows: list[dict[str, Any]], cursor: str | None) -> Slice | None:
    """The rows after the cursor through the last user/assistant row, or None."""
    canonical = [i for i, r in enumerate(rows) if r.get("kind") in CANONICAL]
    anchor = -1
    found = True
    if cursor:
        hits = [i for i in canonical if rows[i]["id"] == cursor]
        if hits:
            anchor = hits[0]
        else:
            found = False
    after = [i for i in canonical if i > anchor]
    if not after:
        return None
    end = after[-1]
    chosen = rows[anchor + 1:end + 1]
    out = Slice(source, chosen, rows[after[0]]["id"], rows[end]["id"], len(rows), found)
    if not found:
        out.notes.append(f"the cursor {cursor} is no longer in {source.path}; the whole source is offered again")
    return out


# -- normalised records ----------------------------------------------------------------------

def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{int((seconds % 1) * 1000):03d}Z"


def parse_time(value: Any) -> float | None:
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().replace("z", "Z")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    text = re.sub(r"([+-]\d\d)(\d\d)$", r"\1:\2", text)
    # fromisoformat before 3.11 takes at most 6 fractional digits
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


def _timestamps(rows: list[dict[str, Any]]) -> list[str]:
    """ISO-ms-Z for every row: anchors as given, gaps interpolated, ±1 s outside."""
    known = [parse_time(r.get("captured_at")) for r in rows]
    anchors = [i for i, t in enumerate(known) if t is not None]
    if not anchors:
        now = time.time()
        return [iso(now + i) for i in range(len(rows))]
    out = []
    for i, t in enumerate(known):
        if t is None:
            before = [a for a in anchors if a < i]
            after = [a for a in anchors if a > i]
            if before and after:
                a, b = before[-1], after[0]
                t = known[a] + (known[b] - known[a]) * (i - a) / (b - a)  # type: ignore[operator]
            elif before:
                t = known[before[-1]] + (i - before[-1])  # type: ignore[operator]
            else:
                t = known[after[0]] - (after[0] - i)  # type: ignore[operator]
        out.append(iso(t))
    return out


def clip_result(text: str, limit: int = RESULT_LIMIT) -> str:
    """Head and tail of a long tool result with a marker between: exactly `limit` code points."""
    if len(text) <= limit:
        return text
    marker = ""
    for _ in range(4):  # the marker's length depends on the count it names
        keep = limit - len(marker)
        fresh = f"\n… [truncated, {len(text) - keep} more chars]\n"
        if fresh == marker:
            break
        marker = fresh
    keep = limit - len(marker)
    head = math.ceil(keep / 2)
    tail = keep - head
    return text[:head] + marker + (text[len(text) - tail:] if tail else "")


def clip_args(raw: Any, limit: int = ARGS_LIMIT) -> dict[str, Any]:
    """Tool arguments as a JSON object of at most `limit` code points when serialised."""
    parsed: Any = raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw) if raw.strip() else {}
        except ValueError:
            parsed = raw
    value: dict[str, Any] = parsed if isinstance(parsed, dict) else {} if parsed in (None, "") else {
        "_raw": parsed if isinstance(parsed, str) else json.dumps(parsed)}

    def size(obj: Any) -> int:
        return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))

    for _ in range(50):
        over = size(value) - limit
        if over <= 0:
            return value
        leaves = list(_string_leaves(value))
        if not leaves:
            break
        holder, key, text = max(leaves, key=lambda leaf: len(leaf[2]))
        cut = max(0, len(text) - over - len("…[cut]"))
        if cut >= len(text):
            break
        holder[key] = text[:cut] + "…[cut]"
    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return {"_truncated": compact[:limit - 40] + "…"}


def _string_leaves(obj: Any) -> Iterable[tuple[Any, Any, str]]:
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else []
    for key, value in items:
        if isinstance(value, str):
            yield obj, key, value
        elif isinstance(value, (dict, list)):
            yield from _string_leaves(value)


def normalise(chosen: Slice) -> list[dict[str, Any]]:
    """The slice as a message array: a meta record, then user/assistant/reasoning/tool
    records with ISO-ms-Z timestamps; error rows and harness noise dropped. A slice of
    several sessions is each session's array in turn, its meta record naming the file."""
    if chosen.parts:
        out: list[dict[str, Any]] = []
        for part in chosen.parts:
            part_records = normalise(part)
            part_records[0]["session"] = part.source.path
            out += part_records
        return out
    rows = chosen.rows
    stamps = _timestamps(rows)
    records: list[dict[str, Any]] = [{"role": "meta", "source": chosen.source.kind}]
    if chosen.skipped:
        records[0]["skipped_lines"] = chosen.skipped
    used: dict[str, int] = {}
    for n, (row, at) in enumerate(zip(rows, stamps), 1):
        kind = row.get("kind")
        if kind in ("user", "assistant", "reasoning"):
            text = row.get("text")
            if not isinstance(text, str) or not text.strip():
                continue
            if kind == "user" and text.lstrip().startswith(_NOISE):
                continue
            records.append({"role": kind, "content": text, "timestamp": at})
        elif kind == "summary":  # a compaction: the tool's summary of what came before
            text = row.get("text")
            if isinstance(text, str) and text.strip():
                records.append({"role": "summary", "content": text, "timestamp": at})
        elif kind == "tool_call":
            call_id = str(row.get("source_message_id") or f"tool-line-{n}")
            used[call_id] = used.get(call_id, 0) + 1
            if used[call_id] > 1:
                call_id = f"{call_id}__{used[call_id]}"
            name = row.get("name") if isinstance(row.get("name"), str) and row.get("name") else "unknown_tool"
            records.append({"role": "assistant", "content": None, "timestamp": at,
                            "tool_calls": [{"id": call_id, "name": name, "args": clip_args(row.get("argsText"))}]})
            if "resultText" in row or isinstance(row.get("resultOk"), bool):
                result = str(row.get("resultText") or "")
                if row.get("resultOk") is False and not result.lower().startswith("error"):
                    result = "Error: " + result
                tool: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": clip_result(result),
                                        "timestamp": at}
                if isinstance(row.get("resultOk"), bool):
                    tool["ok"] = row["resultOk"]
                records.append(tool)
    return records
