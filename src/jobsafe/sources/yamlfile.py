"""YAML with positions, safely: PyYAML composes the node graph (nothing is constructed, so
tags such as ``!!python/object`` never run), and jobsafe turns it into plain values that
remember their line and column.

Aliases are expanded at most once per node and the total size is bounded, so exponential
alias "bombs" end quickly. Templated YAML (Helm's ``{{ … }}``) is read where its structure
survives: expressions become placeholders, template-only lines become blank, and line
numbers stay those of the file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from ..model import KeySlot, Span

MAX_NODES = 200_000
#: manifests are small; a larger YAML file is data, and composing it costs about a second
#: per MiB even with libyaml
MAX_BYTES = 1024 * 1024
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it
TEMPLATE_VALUE = "<template>"
_TEMPLATE_LINE = re.compile(r"^\s*\{\{-?.*?-?\}\}\s*$")
_TEMPLATE_EXPR = re.compile(r"\{\{-?.*?-?\}\}")


class YamlError(Exception):
    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.line, self.column = line, column


class YamlTooLarge(YamlError):
    """Over the size limit: data (a big CRD bundle, say), not a broken manifest."""


@dataclass
class YNode:
    """A YAML value with its position (1-based)."""

    value: object  # dict[str, YNode] | list[YNode] | str | None
    line: int
    column: int
    end_line: int
    key_line: int = 0  # for mapping values: the line of the key
    tag: str = ""
    end_column: int = 0
    #: a flow collection (``{a: 1}``, ``[1, 2]``), not a block one
    flow: bool = False

    def key_slot(self, path: str) -> KeySlot | None:
        """Where a key can be added to this block mapping: on the line right after its own
        key (``spec:``), above the comments that belong to its first key; None for anything
        but a block mapping that starts on a later line than its key."""
        if not isinstance(self.value, dict) or self.flow or not self.value or \
                not self.key_line or self.line <= self.key_line:
            return None
        return KeySlot(Span(path, self.key_line + 1, 1, self.key_line + 1, 1), self.column - 1)

    def value_span(self, path: str) -> Span:
        return Span(path, self.line, self.column, self.end_line, self.end_column)

    def get(self, *path, default=None) -> "YNode | None":
        node = self
        for key in path:
            if not isinstance(node, YNode) or not isinstance(node.value, dict) or key not in node.value:
                return default
            node = node.value[key]
        return node

    def text(self, *path) -> str | None:
        node = self.get(*path)
        if node is None or isinstance(node.value, (dict, list)):
            return None
        return None if node.value is None else str(node.value)

    def items(self):
        return self.value.items() if isinstance(self.value, dict) else ()

    def elements(self) -> list["YNode"]:
        return self.value if isinstance(self.value, list) else []

    def items_at(self, *path):
        """The (key, node) pairs of the mapping at ``path``; none when there is none."""
        node = self.get(*path)
        return node.items() if node is not None else ()

    def list_at(self, *path) -> list["YNode"]:
        """The items of the sequence at ``path``; none when there is no sequence there."""
        node = self.get(*path)
        return node.elements() if node is not None else []


def untemplate(text: str, values: dict | None = None) -> str:
    """Make Helm-style templates parseable without moving any line. ``{{ .Values.a.b }}``
    (also ``| quote``) is the chart's value when ``values`` (its values.yaml) has a scalar
    there; a key whose value a template renders as a block (``labels: {{- include … |
    nindent 4 }}``) keeps the lines written under it as its mapping."""
    out = []
    for line in text.split("\n"):
        block = _BLOCK_VALUE.match(line)
        if _TEMPLATE_LINE.match(line):
            out.append("")
        elif block:
            out.append(block.group(1))
        else:
            out.append(_TEMPLATE_EXPR.sub(
                lambda m: _value(m.group(0), values, quoted=line[:m.start()].count('"') % 2 == 1
                                 or line[:m.start()].count("'") % 2 == 1), line))
    return "\n".join(out)


def _value(expression: str, values: dict | None, quoted: bool) -> str:
    """The chart's value for ``{{ .Values.a.b }}``, written so that the line stays YAML
    (inside quotes as it is; elsewhere quoted unless a plain word or number)."""
    m = _VALUES_REF.fullmatch(expression)
    found: object = values
    for key in (m.group(1).split(".") if m and values else ()):
        found = found.get(key) if isinstance(found, dict) else None
    if not m or not isinstance(found, (str, int, float)) or isinstance(found, bool):
        return TEMPLATE_VALUE
    text = str(found)
    if quoted:
        return text.replace('"', "").replace("'", "")
    return f'"{text}"' if m.group(2) or not re.fullmatch(r"[\w./:-]+", text) else text


#: ``{{ .Values.cron.schedule }}``, ``{{ .Values.x | quote }}``, ``| toYaml``
_VALUES_REF = re.compile(r"\{\{-?\s*\.Values\.([\w.]+)\s*(\|\s*quote\s*)?(?:\|\s*toYaml\s*)?-?\}\}")
#: ``key: {{ … | nindent 4 }}``: a template that renders a block under the key
_BLOCK_VALUE = re.compile(r"^(\s*[\w./-]+:)\s*\{\{-?[^}]*\bnindent\b[^}]*-?\}\}\s*$")


def load_documents(text: str, values: dict | None = None) -> list[YNode]:
    """Every document of a YAML stream; raise YamlError with the problem's position.
    ``values``: a Helm chart's values, for the templates of the chart."""
    if len(text) > MAX_BYTES:
        raise YamlTooLarge(f"YAML file too large to analyse ({len(text) // 1024} KiB, limit "
                        f"{MAX_BYTES // 1024} KiB)")
    templated = "{{" in text
    source = untemplate(text, values) if templated else text
    try:
        roots = list(yaml.compose_all(source, Loader=_LOADER))
    except yaml.MarkedYAMLError as exc:
        mark = exc.context_mark or exc.problem_mark  # where the broken construct starts
        raise YamlError(f"{exc.problem or exc.context or 'invalid YAML'}",
                        (mark.line + 1) if mark else 1, (mark.column + 1) if mark else 1) from None
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        raise YamlError(f"invalid YAML: {str(exc)[:80]}") from None
    budget = [MAX_NODES]
    return [_convert(root, budget, set()) for root in roots if root is not None]


def _convert(node, budget: list[int], expanding: set[int]) -> YNode:
    budget[0] -= 1
    if budget[0] < 0:
        raise YamlError("YAML too large or too many aliases to analyse", node.start_mark.line + 1)
    start, end = node.start_mark, node.end_mark
    if isinstance(node, yaml.MappingNode):
        if id(node) in expanding:
            raise YamlError("recursive YAML alias", start.line + 1)
        expanding.add(id(node))
        value: dict = {}
        for key, child in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            converted = _convert(child, budget, expanding)
            converted.key_line = key.start_mark.line + 1
            value.setdefault(str(key.value), converted)  # duplicate keys: the first wins
        expanding.discard(id(node))
        return YNode(value, start.line + 1, start.column + 1, end.line + 1, tag=node.tag,
                     end_column=end.column + 1, flow=bool(node.flow_style))
    if isinstance(node, yaml.SequenceNode):
        if id(node) in expanding:
            raise YamlError("recursive YAML alias", start.line + 1)
        expanding.add(id(node))
        items = [_convert(child, budget, expanding) for child in node.value]
        expanding.discard(id(node))
        return YNode(items, start.line + 1, start.column + 1, end.line + 1, tag=node.tag,
                     end_column=end.column + 1, flow=bool(node.flow_style))
    scalar: str | None = node.value
    if node.tag.endswith(":null") or (node.style is None and scalar in ("", "~", "null", "Null",
                                                                        "NULL")):
        scalar = None
    return YNode(scalar, start.line + 1, start.column + 1, end.line + 1, tag=node.tag,
                 end_column=end.column + 1)
