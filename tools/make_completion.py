"""Generate shell completion for the three commands from the real argparse parsers.

bash and zsh scripts come from shtab; fish from the parsers directly (shtab has no
fish). They are written to completion/, committed, installed by setup.cfg's
data_files (so `pip install .` and `make install` put them where bash-completion,
zsh and fish look), and tests/test_completion.py fails when one is stale. Nothing
imports shtab at run time: this runs at build time only (`make completion`).

Both bash and zsh also complete `git memory …`, `git memory-patch …` and `git dream …`
through git's own completion, which calls `_git_memory` (bash) or `_git-memory` (zsh).
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "lib"))

# (command, module with build_parser)
COMMANDS = (("git-memory", "gitmemfs.cli.memory"), ("git-memory-patch", "gitmemfs.cli.patch"),
            ("git-dream", "gitmemfs.cli.dream"))
OUT = "completion"


def _parser(command: str, module: str) -> argparse.ArgumentParser:
    import importlib

    parser = importlib.import_module(module).build_parser()
    parser.prog = command
    return parser


def _func(command: str) -> str:
    return "_shtab_" + command.replace("-", "_")


def _bash(command: str, parser: argparse.ArgumentParser) -> str:
    import shtab

    text = shtab.complete(parser, shell="bash")
    git_sub = command[len("git-"):]
    # git's completion (git-completion.bash) calls _git_<sub> for `git <sub> …`:
    # hand it the same words as if `git-<sub>` had been typed.
    shim = f"""
# `git {git_sub} …` through git's own bash completion.
_git_{git_sub.replace("-", "_")}() {{
  local COMP_WORDS=({command} "${{COMP_WORDS[@]:2}}")
  local COMP_CWORD=$((COMP_CWORD - 1))
  local COMP_LINE=${{COMP_LINE/git {git_sub}/{command}}}
  {_func(command)}
}}
"""
    return text + shim


def _zsh(command: str, parser: argparse.ArgumentParser) -> str:
    import shtab

    git_sub = command[len("git-"):]
    # zsh's _git calls _git-<sub> for `git <sub> …`, with the words from <sub> on.
    shim = f"""
# `git {git_sub} …` through zsh's own git completion.
_git-{git_sub}() {{
  {_func(command)} "$@"
}}
"""
    return shtab.complete(parser, shell="zsh") + shim


def _fish(command: str, parser: argparse.ArgumentParser) -> str:
    """Subcommands and options, for `git-memory …` and for `git memory …`."""
    git_sub = command[len("git-"):]
    lines = [f"# Generated from the {command} parser by tools/make_completion.py; do not edit."]
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    names: list[tuple[str, str]] = []
    for action in subs:
        helps = {c.dest: c.help or "" for c in action._choices_actions}
        names += [(name, helps.get(name, "")) for name in action.choices]
    conds = [(f"-c {command}", "__fish_use_subcommand"),
             ("-c git", f"__fish_seen_subcommand_from {git_sub}")]
    for target, cond in conds:
        for name, text in names:
            lines.append(f"complete {target} -f -n '{cond}' -a {name} -d {_quote(text)}")
        for opt in _options(parser):
            lines.append(f"complete {target} -n '{cond}' {opt}")
        for action in subs:
            for name, sub in action.choices.items():
                for opt in _options(sub):
                    lines.append(f"complete {target} -n '__fish_seen_subcommand_from {name}' {opt}")
    return "\n".join(dict.fromkeys(lines)) + "\n"


def _options(parser: argparse.ArgumentParser) -> list[str]:
    out = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or not action.option_strings:
            continue
        flags = []
        for s in action.option_strings:
            flags.append(f"-l {s[2:]}" if s.startswith("--") else f"-s {s[1:]}")
        out.append(" ".join(flags) + (f" -d {_quote(action.help)}" if action.help else "")
                   + ("" if action.nargs == 0 else " -r"))
    return out


def _quote(text: str | None) -> str:
    return "'" + (text or "").split("\n")[0].replace("\\", "\\\\").replace("'", "\\'") + "'"


def scripts() -> dict[str, str]:
    """{relative path: script} for every command and shell."""
    out = {}
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"  # help texts wrap the same everywhere
    try:
        for command, module in COMMANDS:
            parser = _parser(command, module)
            out[f"{OUT}/bash/{command}"] = _bash(command, parser)
            out[f"{OUT}/zsh/_{command}"] = _zsh(command, parser)
            out[f"{OUT}/fish/{command}.fish"] = _fish(command, parser)
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    return out


def main(argv: list[str]) -> int:
    stale = []
    for rel, text in scripts().items():
        path = os.path.join(ROOT, rel)
        try:
            with open(path, encoding="utf-8") as fh:
                current = fh.read()
        except FileNotFoundError:
            current = None
        if current == text:
            continue
        if "--check" in argv:
            stale.append(rel)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {rel}")
    if stale:
        print("stale: " + ", ".join(stale) + " (run make completion)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
