"""griffe extension (mkdocs.yml, mkdocstrings ``extensions``): reST in the docstrings,
as Markdown.  A role becomes a code span (``:class:`~ranklens.Qrels``` shows as
`Qrels`), and a paragraph ending in reST's ``::`` before an indented example (which
Markdown already shows as code) ends in one colon.  A line opening with one of the
function's parameters (``metrics: one name or several``) starts a list item, so the
parameters read as a list rather than as one paragraph.  The docstrings themselves stay
as they are (``help()`` reads them too); ``double backquotes`` are already Markdown
code."""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:mod|func|class|meth|attr|data|exc|obj):`(~?)([^`]+)`")
_LITERAL = re.compile(r"(?m)(\S)::$")
_PARAM_LINE = re.compile(r"^`{0,2}(\w+)`{0,2}: ")


def roles_to_markdown(text: str) -> str:
    def code(m: re.Match[str]) -> str:
        target = m.group(2)
        return f"`{target.rsplit('.', 1)[-1] if m.group(1) else target}`"

    return _LITERAL.sub(r"\1:", _ROLE.sub(code, text))


def parameters_as_list(text: str, names: set[str]) -> str:
    """Unindented lines that open with a parameter name become list items."""
    out: list[str] = []
    for line in text.splitlines():
        m = _PARAM_LINE.match(line)
        if m and m.group(1) in names:
            if out and out[-1].strip() and not out[-1].startswith(("* ", "  ")):
                out.append("")
            line = f"* `{m.group(1)}`: {line[m.end() :]}"
        elif out and out[-1].startswith(("* `", "  ")) and line.strip() and line[0] != " ":
            line = "  " + line  # the item goes on
        out.append(line)
    return "\n".join(out)


class RstRoles(griffe.Extension):
    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is None:
            return
        text = roles_to_markdown(obj.docstring.value)
        try:
            names = {p.name for p in obj.parameters} - {"self", "cls"}
        except (AttributeError, TypeError, ValueError, KeyError):
            names = set()
        obj.docstring.value = parameters_as_list(text, names) if names else text
