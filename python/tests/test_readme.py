"""The README's Python session runs as shown: every statement is executed in
order, and each expression followed by a comment must give the numbers the
comment shows, to the digits shown."""
import ast
import os
import re

from conftest import ROOT


def _session():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text[text.index("\n## Python\n"):]
    section = section[:section.index("\n## ", 1)]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def _matches(value, comment):
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return comment.startswith(", ".join(str(v) for v in value))
    values = value if isinstance(value, tuple) else (value,)
    shown = re.findall(r"-?\d+\.\d+", comment)[:len(values)]
    # Each number is shown rounded: it must be the value to that many decimals.
    return len(shown) == len(values) and all(
        abs(v - float(s)) <= 0.5 * 10 ** -len(s.split(".")[1]) * (1 + 1e-9) for v, s in zip(values, shown))


def test_readme_session():
    code = _session()
    lines = code.splitlines()
    ns = {}
    checked = 0
    for node in ast.parse(code).body:
        if isinstance(node, ast.Expr) and "#" in lines[node.end_lineno - 1][node.end_col_offset:]:
            value = eval(compile(ast.Expression(node.value), "README.md", "eval"), ns)
            comment = lines[node.end_lineno - 1][node.end_col_offset:].split("#", 1)[1].strip()
            assert _matches(value, comment), (ast.get_source_segment(code, node), value, comment)
            checked += 1
        else:
            exec(compile(ast.Module([node], []), "README.md", "exec"), ns)
    assert checked >= 6
