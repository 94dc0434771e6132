"""`lore completion bash|zsh|fish`: a completion script made from lore's own parser
(lore.cli.reference), so it completes exactly the commands, options and choices `lore` parses.

No library: shtab, the small well-kept one, has no fish; argcomplete runs the program on every TAB.
Each script finds the command path typed so far (the words that name subcommands), then offers the
choices of the option before the cursor, else the options (after a `-`), else the subcommands and
the positional choices, else files. Installing (the README's "Shell completion"):

    bash   eval "$(lore completion bash)"                          in ~/.bashrc
    zsh    eval "$(lore completion zsh)"                           in ~/.zshrc (after compinit)
    fish   lore completion fish > ~/.config/fish/completions/lore.fish
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from lore.cli.reference import Command, Option, walk


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    makers: dict[str, Callable[[list[Command]], str]] = {"bash": bash, "zsh": zsh, "fish": fish}
    return makers[shell](walk(parser))


def _q(text: str) -> str:
    """A single-quoted bash or zsh word."""
    return "'" + text.replace("'", "'\\''") + "'"


def _fq(text: str) -> str:
    """A single-quoted fish word (fish escapes a quote inside with a backslash)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _value_kind(option: Option) -> str:
    """What the value of an option is completed with: its words, a directory, a file, or nothing."""
    if option.words:
        return " ".join(option.words)
    if option.metavar == "DIR":
        return "-d"
    if option.metavar == "FILE":
        return "-f"
    return "-"


def _cases(commands: list[Command], value: Callable[[Command], str], indent: str = "    ") -> str:
    lines = [f"{indent}{_q(c.name)}) echo {_q(value(c))};;" for c in commands if value(c)]
    return "\n".join(lines)


def _functions(commands: list[Command]) -> str:
    """The lookups both bash and zsh scripts use: shell functions made of `case` statements."""
    values = []
    for c in commands:
        for option in c.options:
            if option.takes_value:
                for flag in option.flags:
                    values.append(f"    {_q(c.name + '|' + flag)}) echo {_q(_value_kind(option))};;")
    return f"""_lore_children() {{
  case "$1" in
{_cases(commands, lambda c: " ".join(name for name, _ in c.children))}
  esac
}}
_lore_options() {{
  case "$1" in
{_cases(commands, lambda c: " ".join(f for o in c.options for f in o.flags) + " --help")}
  esac
}}
_lore_words() {{
  case "$1" in
{_cases(commands, lambda c: " ".join(c.words))}
  esac
}}
# "$path|$option": the option's words; -d a directory, -f a file, - any value
_lore_values() {{
  case "$1|$2" in
{chr(10).join(values)}
  esac
}}"""


def bash(commands: list[Command]) -> str:
    return f"""# bash completion for lore, made from its argument parser by `lore completion bash`.
# Install: eval "$(lore completion bash)" in ~/.bashrc
{_functions(commands)}
_lore() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="" cmd="" i w values
  (( COMP_CWORD > 1 )) && prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  for (( i = 1; i < COMP_CWORD; i++ )); do
    w="${{COMP_WORDS[i]}}"
    [[ " $(_lore_children "$cmd") " == *" $w "* ]] && cmd="${{cmd:+$cmd }}$w"
  done
  values="$(_lore_values "$cmd" "$prev")"
  case "$values" in
    "") ;;
    -d) COMPREPLY=($(compgen -d -- "$cur")); return;;
    -f) COMPREPLY=($(compgen -f -- "$cur")); return;;
    -) COMPREPLY=(); return;;
    *) COMPREPLY=($(compgen -W "$values" -- "$cur")); return;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_lore_options "$cmd")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_lore_children "$cmd") $(_lore_words "$cmd")" -- "$cur"))
  fi
}}
complete -o default -o bashdefault -F _lore lore
"""


def zsh(commands: list[Command]) -> str:
    described = []
    for c in commands:
        if c.children:
            entries = " ".join(_q(f"{name}:{text}") for name, text in c.children)
            described.append(f"    {_q(c.name)}) print -rl -- {entries};;")
    return f"""#compdef lore
# zsh completion for lore, made from its argument parser by `lore completion zsh`.
# Install: eval "$(lore completion zsh)" in ~/.zshrc (after compinit), or save it as _lore in $fpath.
{_functions(commands)}
_lore_described() {{
  case "$1" in
{chr(10).join(described)}
  esac
}}
_lore() {{
  local cmd="" w i values more
  local -a kids described
  for (( i = 2; i < CURRENT; i++ )); do
    w=${{words[i]}}
    kids=(${{=$(_lore_children "$cmd")}})
    (( ${{kids[(Ie)$w]}} )) && cmd="${{cmd:+$cmd }}$w"
  done
  values=$(_lore_values "$cmd" "${{words[CURRENT-1]}}")
  case $values in
    "") ;;
    -d) _files -/; return;;
    -f) _files; return;;
    -) return;;
    *) compadd -- ${{=values}}; return;;
  esac
  if [[ ${{words[CURRENT]}} == -* ]]; then
    compadd -- ${{=$(_lore_options "$cmd")}}
    return
  fi
  described=(${{(f)"$(_lore_described "$cmd")"}})
  if (( ${{#described}} )); then
    _describe -t commands 'lore command' described
    return
  fi
  more=$(_lore_words "$cmd")
  if [[ -n $more ]]; then compadd -- ${{=more}}; else _files; fi
}}
if [[ "$funcstack[1]" == _lore ]]; then _lore "$@"; else compdef _lore lore; fi
"""


def fish(commands: list[Command]) -> str:
    children = []
    lines = []
    for c in commands:
        at = f"-n {_fq('__lore_at ' + _fq(c.name))}"
        if c.children:
            names = " ".join(name for name, _ in c.children)
            children.append(f"        case {_fq(c.name)}\n            printf '%s\\n' {names}")
            lines += [f"complete -c lore {at} -a {name} -d {_fq(text)}" for name, text in c.children]
        if c.words:
            lines.append(f"complete -c lore {at} -a {_fq(' '.join(c.words))}")
        elif not c.children and any(not a.option_strings for a in c.parser._actions):
            lines.append(f"complete -c lore {at} -F")  # a positional without choices: a file or folder
        for option in c.options:
            flags = " ".join(f"-s {f[1:]}" if len(f) == 2 else f"-l {f[2:]}" for f in option.flags)
            kind = _value_kind(option) if option.takes_value else ""
            value = {"": "", "-": " -x", "-f": " -r -F", "-d": " -x -a '(__fish_complete_directories)'"}.get(
                kind, f" -x -a {_fq(kind)}"
            )
            lines.append(f"complete -c lore {at} {flags}{value} -d {_fq(option.help)}")
    cases = "\n".join(children)
    body = "\n".join(lines)
    return f"""# fish completion for lore, made from its argument parser by `lore completion fish`.
# Install: lore completion fish > ~/.config/fish/completions/lore.fish
function __lore_children
    switch "$argv[1]"
{cases}
    end
end
function __lore_cmd
    set -l cmd ''
    for w in (commandline -opc)[2..-1]
        if contains -- $w (__lore_children $cmd)
            set cmd (string trim -- "$cmd $w")
        end
    end
    echo $cmd
end
function __lore_at
    set -l cmd (__lore_cmd)
    test "$cmd" = "$argv[1]"
end
complete -c lore -f
{body}
"""
