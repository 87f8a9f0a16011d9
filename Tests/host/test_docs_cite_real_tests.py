"""The documentation names the tests that prove what it says (docs/compatibility.md's cells, docs/testing.md, the
guides): every `test_FILE.py::test_NAME` it cites must be a test that exists, so that the documents cannot drift from
the suite. A parametrized citation (`test_NAME[ID]`) must name one of the test's parameters."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
CITATION = re.compile(r"\b(test_[a-z0-9_]+\.py)::(test_[A-Za-z0-9_]+)(?:\[([^\]]+)\])?")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def defined_tests(path: Path) -> dict[str, str]:
    """The test functions of a module, each with the source of its decorators (where its parameters are)."""
    source = path.read_text()
    tree = ast.parse(source)
    return {node.name: "".join(ast.get_source_segment(source, d) or "" for d in node.decorator_list)
            for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_test_the_documents_cite_exists():
    citations = [(document.name, *match.groups()) for document in documents()
                 for match in CITATION.finditer(document.read_text())]
    assert len(citations) > 20, f"found only {len(citations)} citations: is the pattern still the documents' form?"
    modules: dict[str, dict[str, str] | None] = {}
    missing = []
    for document, module, name, parameter in citations:
        if module not in modules:
            found = [p for p in (ROOT / "Tests").rglob(module)]
            modules[module] = defined_tests(found[0]) if found else None
        tests = modules[module]
        if tests is None:
            missing.append(f"{document}: {module} (no such file under Tests/)")
        elif name not in tests:
            missing.append(f"{document}: {module}::{name} (no such test)")
        elif parameter is not None and f'"{parameter}"' not in tests[name] and f"'{parameter}'" not in tests[name]:
            missing.append(f"{document}: {module}::{name}[{parameter}] (no such parameter)")
    assert not missing, "the documents cite tests that do not exist:\n" + "\n".join(missing)
