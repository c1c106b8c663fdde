"""The fast tree walk and positions are libcst's own: ``node.children`` but for its trivia
(the same other nodes in the same order: findings depend on the order of ``walk``, the
first match wins in several recognisers) and ``PositionProvider``'s ranges, for every node
class the Python front end meets."""
from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from jobsafe.sources.python import syntax
from jobsafe.sources.python.positions import positions
from jobsafe.sources.python.syntax import children, walk

ROOT = Path(__file__).resolve().parents[1]

#: every kind of field a node class visits: optional, sentinel, sequence, body sequence,
#: and the one visited only when it is set (an f-string's format spec)
SAMPLES = {
    "fstrings": 'x = f"{a}" f"{b!r:>{width}}" f"{c=}" rf"{d:{e}.{f}}"\n',
    "match": ("match command.split():\n    case [action, *rest] if rest:\n        pass\n"
              "    case {'k': v, **kw}:\n        pass\n    case Point(x=0) | None:\n"
              "        pass\n    case _:\n        pass\n"),
    "generics": "def first[T: int, *Ts, **P](xs: list[T]) -> T:\n    return xs[0]\n"
                "type Pair[K] = tuple[K, K]\nclass Box[T]:\n    pass\n",
    "statements": ("@decorate(1)\n@other\nasync def f(a, /, b=2, *c, d: int = 3, **e) -> None:\n"
                   "    global g\n    async with lock as held, other():\n        await x\n"
                   "    try:\n        yield from y\n    except* (A, B) as exc:\n"
                   "        raise E from exc\n    else:\n        pass\n    finally:\n"
                   "        del a[1:2, ::3]\n    for i in range(3):\n        continue\n"
                   "    else:\n        x: int\n    while (n := n - 1) > 0:\n        break\n"
                   "    assert not a and b or c, 'msg'\n    lambda q, *r: q if r else -q\n"
                   "    return {k: v for k, v in d.items() if v}, [*a], {*b}, (yield)\n"
                   "import a.b as c\nfrom . import (d, e as f)\nfrom x import *\n"
                   "if a:  # comment\n    pass\nelif b: pass\nelse:\n    x = 1; y = 2\n"
                   "with (open(a) as f, open(b) as g):\n    print(f, g, sep='', **kw)\n"),
}


def _check(module: cst.Module) -> int:
    checked = 0
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        every = list(node.children)
        real = [child for child in every if type(child) not in syntax.TRIVIA]
        fast = children(node)
        if type(node) in syntax.TRIVIA:  # (nothing a walk skips with it is more than trivia)
            assert not real, type(node).__name__
        assert len(fast) == len(real) and all(a is b for a, b in zip(fast, real)), \
            type(node).__name__
        stack.extend(reversed(every))  # source order: a class is first probed where it
        checked += 1                   # first occurs (an f-string without a format spec)
    return checked


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_children_match_libcst(name, monkeypatch):
    monkeypatch.setattr(syntax, "_FIELDS", {})  # no class probed by an earlier test
    config = cst.PartialParserConfig(python_version="3.12")
    assert _check(cst.parse_module(SAMPLES[name], config=config)) > 20


def test_children_match_libcst_on_real_code():
    """jobsafe's own source and tests: a few hundred thousand nodes of every common kind."""
    checked = sum(_check(cst.parse_module(path.read_bytes()))
                  for folder in ("src", "tests") for path in sorted((ROOT / folder).rglob("*.py")))
    assert checked > 100_000


def test_walk_is_depth_first_in_source_order():
    module = cst.parse_module("a = b(c, d.e)\n")
    names = [n.value for n in walk(module) if isinstance(n, cst.Name)]
    assert names == ["a", "b", "c", "d", "e"]


def _provider_ranges(module: cst.Module) -> dict[int, tuple[int, int, int, int]]:
    """PositionProvider's range of every node but trivia (which ``positions`` skips)."""
    ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {id(node): (r.start.line, r.start.column, r.end.line, r.end.column)
            for node, r in ranges.items() if type(node) not in syntax.TRIVIA}


def _ranges_asked(ranges: dict, module: cst.Module) -> dict:
    """``positions``' ranges of the nodes ``_provider_ranges`` holds (None where missing)."""
    return {key: ranges.get(key) for key in _provider_ranges(module)}


def test_walks_read_the_collectors_children():
    """Inside ``children_known`` the walkers visit exactly what they visit without it, in
    the same order, on every module of jobsafe; a node made afterwards (not in the map)
    is walked from its own children; the map is put back after the block."""
    from jobsafe.sources.python.facts import ModuleFacts
    from jobsafe.sources.python.module import _ModuleAnalyser

    for path in sorted((ROOT / "src").rglob("*.py")):
        text = path.read_text()
        module = syntax.parse_source(text, cst.PartialParserConfig())
        plain = [list(walk(module)), list(syntax.walk_unit(module.body))]
        analyser = _ModuleAnalyser("m.py", module, text, ModuleFacts("m.py"), {})
        assert len(analyser.reversed_children) == len(plain[0]) + 1
        with syntax.children_known(analyser.reversed_children):
            known = [list(walk(module)), list(syntax.walk_unit(module.body))]
            made = cst.Call(func=cst.Name("f"), args=[cst.Arg(cst.Name("x"))])
            assert [type(n) for n in walk(made)] == [type(n) for n in walk(made.deep_clone())]
        assert all(len(a) == len(b) and all(x is y for x, y in zip(a, b))
                   for a, b in zip(plain, known))
    assert syntax._KNOWN == {}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_positions_match_libcst(name):
    module = cst.parse_module(SAMPLES[name], config=cst.PartialParserConfig(python_version="3.12"))
    assert _ranges_asked(positions(module)[0], module) == _provider_ranges(module)


def test_positions_match_libcst_on_real_code():
    """Decorators, parentheses, comments, line continuations, CRLF and multi-line strings
    as real code writes them: every node's range is PositionProvider's."""
    texts = [path.read_bytes() for folder in ("src", "tests")
             for path in sorted((ROOT / folder).rglob("*.py"))]
    texts.append(b"x = (1 +\r\n     2)  # crlf\r\ny = '''a\r\nb'''\r\nz = \\\r\n    3\r\n")
    for text in texts:
        module = cst.parse_module(text)
        assert _ranges_asked(positions(module)[0], module) == _provider_ranges(module)


def test_code_read_off_the_positions_is_libcsts_code():
    """Once positions are known, an expression's code is sliced from the code they were
    generated with: on every node of jobsafe's modules and tests (and a module with CRLF,
    a byte-order mark and a last lone CR, where the generated code is not the source) it is
    what libcst generates for the node."""
    from jobsafe.sources.python.facts import ModuleFacts
    from jobsafe.sources.python.module import _ModuleAnalyser

    texts = [p.read_text() for folder in ("src", "tests")
             for p in sorted((ROOT / folder).rglob("*.py"))]
    texts.append("\ufeffx = (a.b +\r\n     c[1])  # crlf\r\ny = f(\r\n  '''a\r\nb''').g\r")
    sliced = 0
    for text in texts:
        module = syntax.parse_source(text, cst.PartialParserConfig())
        analyser = _ModuleAnalyser("m.py", module, text, ModuleFacts("m.py"), {})
        analyser.line(module)  # positions known
        for node in analyser.order:
            if isinstance(node, cst.BaseExpression):  # (what the recognisers ask it for)
                assert analyser.code(node) == module.code_for_node(node)
                sliced += isinstance(node, (cst.Attribute, cst.Call)) and not node.lpar
    assert sliced > 1000


def test_the_unvalidated_parse_is_libcsts_parse():
    """``parse_source`` skips the nodes' validation only: on every module of jobsafe and
    the samples the tree is libcst's own, validation is back on afterwards (a node built
    by hand is checked), and a syntax error still raises."""
    config = cst.PartialParserConfig(python_version="3.12")
    texts = [*SAMPLES.values(), *(p.read_text() for p in sorted((ROOT / "src").rglob("*.py")))]
    for text in texts:
        assert syntax.parse_source(text, config).deep_equals(cst.parse_module(text, config=config))
    with pytest.raises(cst.ParserSyntaxError):
        syntax.parse_source("def (:\n", config)
    with pytest.raises(cst.CSTValidationError):
        cst.SimpleWhitespace("x")


def test_the_unvalidated_parse_validates_nothing(monkeypatch):
    checked = []
    monkeypatch.setattr(cst.SimpleWhitespace, "_validate", lambda node: checked.append(node))
    config = cst.PartialParserConfig(python_version="3.12")
    syntax.parse_source(SAMPLES["statements"], config)
    assert checked == []
    cst.parse_module(SAMPLES["statements"], config=config)
    assert checked


def test_the_code_of_a_leaf_is_libcsts_code():
    """A name, string or number is written as its value (parentheses and all through code
    generation): the same text as libcst's on every such node of jobsafe's own code."""
    from jobsafe.sources.python.module_base import _LEAVES, ModuleBase
    from jobsafe.sources.python.facts import ModuleFacts

    texts = [*SAMPLES.values(), "x = (a) + ((b)) + ( 'q' ) + (1.5j)\n",
             *(p.read_text() for p in sorted((ROOT / "src").rglob("*.py")))]
    leaves = 0
    for text in texts:
        module = cst.parse_module(text, config=cst.PartialParserConfig(python_version="3.12"))
        base = ModuleBase("m.py", module, text, ModuleFacts("m.py"))
        for node in walk(module):
            if type(node) in _LEAVES:
                leaves += 1
                assert base.code(node) == module.code_for_node(node)
    assert leaves > 10_000


def test_a_plain_strings_value_is_what_python_evaluates():
    """A string without escapes, carriage returns or NUL, and not bytes, is read off its
    code; every other string is evaluated. Every string of jobsafe's source and tests, and
    the edge cases, has the value libcst's ``evaluated_value`` (``ast.literal_eval``) gives,
    or None where Python refuses it."""
    from jobsafe.sources.python.values import literal

    edge = ['x = ("a", r"b", u"c", R"d", U"e", b"f", rb"g", Br"h", """i\nj""", r"\\k", "\\n",',
            "     'l\\\r\nm', '''n\r\no''', '\\x00', r'''p\\q''', \"\", '''''', 'é ✓')\n"]
    texts = ["".join(edge), *(p.read_text() for folder in ("src", "tests")
                              for p in sorted((ROOT / folder).rglob("*.py")))]
    read_off = 0
    for text in texts:
        for node in walk(cst.parse_module(text)):
            if type(node) is cst.SimpleString:
                try:
                    expected = node.evaluated_value
                except (SyntaxError, ValueError):
                    expected = None
                assert literal(node) == expected and type(literal(node)) is type(expected), \
                    node.value
                read_off += "\\" not in node.value and "b" not in node.prefix.lower()
    assert read_off > 5_000
