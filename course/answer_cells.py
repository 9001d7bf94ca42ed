"""Which code of a notebook becomes the module ``submission`` that an exercise's tests import: one rule, used by
``load_submission`` in the nbgrader kernel (course/notebook_setup.py) and by instructor/regrade.py outside it.

The learner's cells are the code cells before the exercise's test cell, in notebook order, except the
instructor's: a cell that calls ``load_submission`` (a test cell) or ``notebook_setup.prepare`` (the setup cell).
Each cell is parsed once (IPython's magics turned into Python first, as the kernel does); a cell that does not parse,
or is longer than ``MAX_CELL`` characters, defines nothing, as it defined nothing in the kernel.

The module is made of whole top-level statements, in notebook order:

- for each name the tests import, the last statement that binds it (a ``def``, a decorated ``def``, a ``class``,
  an ``import``, an assignment, or a ``try:``/``if``/``with``/``for`` block that binds it somewhere inside);
- then, for every statement taken, the statements that bind the names it needs: a name it uses when it runs
  (decorators, default values, base classes, the right-hand side of an assignment) from the last statement before
  it; a name its functions use when they are called (a helper, an import, a constant) from the last statement of
  all the learner's cells.

Statements that bind nothing (a call, a ``print``, an experiment) are left out, so a scratch cell never breaks or
slows the import.  What this cannot see: a name bound only as a side effect of a call (``globals()[...] = ...``,
``global x`` in a function the cell calls).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

MAX_CELL = 256 << 10     # characters in one cell
MAX_CELLS = 5000         # cells considered in one notebook
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


@dataclass
class Statement:
    cell: int
    text: str
    binds: set[str]
    now: set[str]      # names read when the statement runs
    later: set[str]    # names its functions read when they are called
    position: tuple[int, int] = (0, 0)


@dataclass
class Cells:
    """The learner's cells of one notebook, parsed once; ``module(names, before)`` for each exercise."""

    sources: list[str]
    statements: list[Statement] = field(init=False)

    def __post_init__(self):
        self.statements = []
        for index, source in enumerate(self.sources[:MAX_CELLS]):
            if type(source) is str:
                self.statements += _statements(index, source)

    def module(self, names, before: int | None = None) -> tuple[str, list[str]]:
        """The source of ``submission`` for ``names`` from the cells before index ``before`` (all when None),
        and the names no statement binds."""
        pool = [s for s in self.statements if before is None or s.cell < before]
        end = (len(self.sources), 0)
        chosen: set[int] = set()
        missing = []
        todo = [(name, end, True) for name in names]
        while todo:
            name, limit, wanted = todo.pop()
            found = next((k for k in range(len(pool) - 1, -1, -1)
                          if pool[k].position < limit and name in pool[k].binds), None)
            if found is None:
                if wanted:
                    missing.append(name)
                continue
            if found in chosen:
                continue
            chosen.add(found)
            s = pool[found]
            todo += [(n, s.position, False) for n in s.now] + [(n, end, False) for n in s.later]
        text = "\n\n\n".join(pool[k].text for k in sorted(chosen))
        return (text + "\n" if text else ""), sorted(set(missing), key=list(names).index)


def is_instructors(tree: ast.Module) -> bool:
    """A test cell (it calls ``load_submission``) or the setup cell (it calls ``notebook_setup.prepare``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "load_submission":
                return True
            if isinstance(f, ast.Attribute) and f.attr == "prepare" and "notebook_setup" in ast.dump(f.value):
                return True
    return False


def _python(source: str) -> str:
    """The cell as the kernel runs it: IPython's transformations (``%magic``, ``!shell``) applied."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001  (IPython could not make sense of it: neither could the kernel)
        return source


def _statements(cell: int, source: str) -> list[Statement]:
    if len(source) > MAX_CELL:
        return []
    text = _python(source)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    if is_instructors(tree):
        return []
    lines = text.splitlines(keepends=True)
    out = []
    for k, node in enumerate(tree.body):
        try:
            binds, now, later = _names(node)
        except RecursionError:
            return []
        if binds:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
            out.append(Statement(cell, "".join(lines[first - 1:node.end_lineno]).rstrip("\n"), binds, now, later,
                                 (cell, k)))
    return out


def _names(statement: ast.stmt) -> tuple[set[str], set[str], set[str]]:
    """(bound at module level, read when it runs, read by its functions when called) for one statement."""
    loads, stores, _, scopes = _scope([statement])
    now, later = set(loads), set()
    while scopes:
        scope = scopes.pop()
        if isinstance(scope, ast.ClassDef):   # its body runs now; its methods when called
            body_loads, body_stores, _, inner = _scope(scope.body)
            now.update(body_loads - body_stores)
            scopes += inner
        elif isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            later.update(_free(scope))
        else:
            now.update(_free(scope))
    return stores, now, later


def _scope(nodes) -> tuple[set[str], set[str], set[str], list[ast.AST]]:
    """Names read and bound directly in one scope, its ``global`` names, and the scopes nested in it (whose
    decorators, defaults and base classes are read here)."""
    loads, stores, declared, scopes = set(), set(), set(), []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            scopes.append(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stores.add(node.name)
                stack += node.decorator_list
            if isinstance(node, ast.ClassDef):
                stack += node.bases + [k.value for k in node.keywords]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                stack += [d for d in node.args.defaults + node.args.kw_defaults if d is not None]
            elif not isinstance(node, ast.Lambda):   # a comprehension's first iterable runs in this scope
                stack.append(node.generators[0].iter)
            continue
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else stores).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stores.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            stores.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            stores.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            stores.add(node.rest)
        stack += ast.iter_child_nodes(node)
    return loads, stores, declared, scopes


def _free(scope: ast.AST) -> set[str]:
    """Names a nested scope reads from outside itself (its locals and parameters excluded)."""
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} | {x.arg for x in (a.vararg, a.kwarg) if x}
        body = scope.body if isinstance(scope.body, list) else [scope.body]
    elif isinstance(scope, ast.ClassDef):
        params, body = set(), scope.body
    else:   # a comprehension: its targets are local, its first iterable was read outside
        params = set()
        body = [scope.elt] if not isinstance(scope, ast.DictComp) else [scope.key, scope.value]
        for k, g in enumerate(scope.generators):
            body += [g.target, *g.ifs] + ([g.iter] if k else [])
    loads, stores, declared, scopes = _scope(body)
    local = (params | stores) - declared
    inner = set().union(*(_free(s) for s in scopes)) if scopes else set()
    return (loads | inner) - local
