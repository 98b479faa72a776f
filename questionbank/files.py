"""Question and concept files: parse, validate with line numbers, load as a QuestionSpec.

A content file is a YAML front-matter block between two `---` lines, then Markdown
(content/README.md is the schema an instructor writes from). `load_question` is the one way
from a file's text to a typed question; every problem it finds carries its file:line. No
Django imports: `load_content` and `check_content` are thin commands over this module.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from questionbank.spec import DIAGRAM_STEP, SLUG_RE, STEP_KEYS, QuestionSpec

DIFFICULTIES = ("intro", "core", "advanced")
ROUNDINGS = ("ceil", "floor", "round")
RUBRIC_ID_RE = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_FILE_BYTES = 512 * 1024
# The longest title and summary the site stores (the columns of questions.models): a longer
# one passed every check here, then failed to publish on PostgreSQL, which enforces them.
TEXT_MAX_CHARS = {"title": 200, "summary": 500}
CONTENT_DIR = Path(__file__).resolve().parent.parent / "content"

QUESTION_KEYS = {
    "slug", "title", "summary", "difficulty", "tags", "minutes", "brief", "steps", "tests",
    "sources",
}  # fmt: skip
QUESTION_REQUIRED = {"slug", "title", "summary", "difficulty", "brief", "steps"}
BRIEF_KEYS = {
    "model", "gpu", "context_length", "peak_qps", "mean_qps", "ttft_p99_ms", "tpot_p99_ms",
    "e2e_p99_ms", "input_tokens", "output_tokens", "tenancy", "constraints",
}  # fmt: skip
BRIEF_NUMBERS = {
    "context_length", "peak_qps", "mean_qps", "ttft_p99_ms", "tpot_p99_ms", "e2e_p99_ms",
    "input_tokens", "output_tokens",
}  # fmt: skip
STEP_COMMON_KEYS = {
    "minutes", "prompt", "rubric", "reference", "concepts", "interviewer_notes", "misconceptions",
    "reference_diagram", "diagram",
}  # fmt: skip
STEP_EXTRA_KEYS = {"estimate": {"givens", "quantities"}, "tradeoffs": {"follow_ups"}}
RUBRIC_KEYS = {"id", "says", "weight", "recognise", "concepts", "probe", "diagram"}
RUBRIC_OPTIONAL_KEYS = {"concepts", "probe", "diagram"}
DIAGRAM_RULE_KEYS = {"path", "node", "edge_label"}
RECOGNISE_KEYS = {"all", "partial"}
GIVEN_KEYS = {"name", "label", "value"}
QUANTITY_KEYS = {"id", "label", "formula", "unit", "tolerance", "rounding", "mistakes"}
MISTAKE_KEYS = {"formula", "replace", "hint", "kind"}  # planner.engine.checker.MISTAKE_KEYS
FOLLOW_UP_KEYS = {"id", "prompt", "rubric", "reference", "concepts"}
MISCONCEPTION_KEYS = {"id", "idea", "contradicts", "explanation", "concepts", "recognise"}
CONCEPT_KEYS = {"slug", "title", "summary", "related"}
ANSWER_TEST_KEYS = {"name", "answer", "expect", "offline", "flags", "diagram"}
NAPKIN_TEST_KEYS = {"name", "quantity", "answer", "worksheet", "verdict", "mistake", "hint"}
RUBRIC_VERDICTS = ("hit", "partial", "miss")  # grading.types.VERDICTS

# libyaml's C parser reads the same YAML about ten times faster than PyYAML's pure-Python one,
# which dominated loading the content (and every test that loads it). A PyYAML built without
# libyaml still gives the same nodes, marks and errors, only slower.
YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a content file, at a line (1-based)."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass
class ContentFile:
    """A parsed content file: its front matter, its Markdown body, and where each value sits."""

    path: str
    text: str
    meta: dict[str, Any]
    body: str
    lines: dict[tuple, int] = field(default_factory=dict)
    body_line: int = 1
    problems: list[Problem] = field(default_factory=list)

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def line_of(self, *path: Any) -> int:
        """The line of the value at `path` (keys and list indexes), or of its nearest parent."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 1)

    def problem(self, path: tuple, message: str) -> None:
        self.problems.append(Problem(self.path, self.line_of(*path), message))


class ContentError(Exception):
    """A content file that cannot be read at all (as opposed to one with problems)."""


def parse_file(path: str | Path, text: str | None = None) -> ContentFile:
    """Read a content file into front matter and body; YAML errors become problems."""
    path = str(path)
    if text is None:
        raw = Path(path).read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            cf = ContentFile(path, "", {}, "")
            cf.problems.append(Problem(path, line, "file is not valid UTF-8"))
            return cf
    text = text.removeprefix("\ufeff")
    cf = ContentFile(path, text, {}, "")
    if len(text.encode("utf-8")) > MAX_FILE_BYTES:
        cf.problems.append(Problem(path, 1, f"file is larger than {MAX_FILE_BYTES // 1024} KiB"))
        return cf
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        cf.problems.append(Problem(path, 1, "front matter must start with a '---' line"))
        return cf
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        cf.problems.append(Problem(path, 1, "front matter is not closed by a '---' line"))
        return cf
    front = "\n".join(lines[1:end])
    cf.body = "\n".join(lines[end + 1 :]).strip("\n")
    cf.body_line = end + 2
    alias_line = _first_alias_line(front) if "&" in front else None
    if alias_line is not None:
        cf.problems.append(
            Problem(
                path,
                alias_line,
                "YAML aliases (*name) are not allowed in content files: write the value out",
            )
        )
        return cf
    try:
        node = yaml.compose(front, Loader=YAML_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = (mark.line + 2) if mark is not None else 1
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        # A '[', '{' or quote left open is found only where the parser next stumbles, a line
        # or more below: the fault is on the line that opened it.
        opened = getattr(exc, "context_mark", None)
        context = getattr(exc, "context", None) or ""
        if (
            opened is not None
            and mark is not None
            and opened.line < mark.line
            and context.startswith(("while parsing a flow", "while scanning a quoted"))
        ):
            line = opened.line + 2
            what = {"sequence": "'['", "mapping": "'{'"}.get(context.split()[-1], "quote")
            reason = f"the {what} on this line is not closed ({reason})"
        cf.problems.append(Problem(path, line, f"front matter is not valid YAML: {reason}"))
        return cf
    if node is None:
        cf.problems.append(Problem(path, 2, "front matter is empty"))
        return cf
    constructor = YAML_LOADER("")
    try:
        value = _to_python(node, (), cf, constructor)
    finally:
        constructor.dispose()
    if not isinstance(value, dict):
        cf.problems.append(Problem(path, 2, "front matter must be a mapping of keys to values"))
        return cf
    cf.meta = value
    return cf


def _first_alias_line(front: str) -> int | None:
    """The file line of the first YAML alias (`*name`) in the front matter, if any.

    Aliases are expanded into copies when the front matter becomes Python values, so a few
    lines of nested `*a` references grow into millions of values (five levels of ten took
    5.6 s here). No content file needs them, and the editor parses on every keystroke, so
    they are refused before anything is expanded. A YAML error is left to the composer,
    which reports it with its line. Only called when the front matter holds an anchor (`&`):
    an alias without one is a YAML error the composer reports."""
    if "*" not in front:
        return None
    try:
        for event in yaml.parse(front, Loader=YAML_LOADER):
            if isinstance(event, yaml.AliasEvent):
                return event.start_mark.line + 2  # +1 for 1-based, +1 for the opening '---'
    except yaml.YAMLError:
        return None
    return None


def _to_python(node: yaml.Node, path: tuple, cf: ContentFile, constructor: Any) -> Any:
    """Convert a composed YAML node, recording the line (file-relative) of every value."""
    cf.lines[path] = node.start_mark.line + 2  # +1 for 1-based, +1 for the opening '---'
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                cf.problems.append(
                    Problem(cf.path, key_node.start_mark.line + 2, "keys must be plain names")
                )
                continue
            key = key_node.value
            if key in result:
                cf.problems.append(
                    Problem(cf.path, key_node.start_mark.line + 2, f"duplicate key '{key}'")
                )
                continue
            result[key] = _to_python(value_node, (*path, key), cf, constructor)
            cf.lines[(*path, key)] = key_node.start_mark.line + 2  # the key, not its value
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(item, (*path, i), cf, constructor) for i, item in enumerate(node.value)]
    try:
        value = constructor.construct_object(node, deep=True)
    except yaml.YAMLError:
        return node.value
    except (ValueError, OverflowError):
        # A scalar YAML reads but Python cannot hold: a date that does not exist (2024-02-30),
        # an integer past the digit limit of int().
        shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
        cf.problems.append(
            Problem(
                cf.path,
                node.start_mark.line + 2,
                f"the value '{shown}' cannot be read: write a valid number or date, or put it "
                "in quotes to keep it as text",
            )
        )
        return node.value
    if isinstance(value, float) and not math.isfinite(value):
        # YAML's .nan and .inf: no content needs one, and a revision stores its front matter
        # as JSON, which has neither.
        name = next((p for p in reversed(path) if isinstance(p, str)), "value")
        cf.problems.append(
            Problem(cf.path, node.start_mark.line + 2, f"'{name}' must be a finite number")
        )
    return value


# --- validation -------------------------------------------------------------------------


def validate_question(cf: ContentFile, *, concept_slugs: set[str] | None) -> list[Problem]:
    """Check a question file against the schema in content/README.md.

    `concept_slugs` is the set of known concept notes; None skips the link check.
    Formulas are checked with the planner's napkin-math engine.
    """
    if cf.problems:
        return cf.problems
    meta = cf.meta
    _check_keys(cf, (), meta, QUESTION_KEYS, QUESTION_REQUIRED, "question")
    slug = meta.get("slug")
    if "slug" in meta and (not isinstance(slug, str) or not SLUG_RE.match(slug)):
        cf.problem(("slug",), "slug must be up to 50 lowercase letters, digits and hyphens")
    elif isinstance(slug, str) and Path(cf.path).stem != slug and Path(cf.path).suffix == ".md":
        cf.problem(("slug",), f"slug '{slug}' does not match the file name '{Path(cf.path).name}'")
    for key in ("title", "summary"):
        if key in meta:
            _check_text(cf, (key,), meta[key], TEXT_MAX_CHARS[key])
    if "difficulty" in meta and meta["difficulty"] not in DIFFICULTIES:
        cf.problem(("difficulty",), f"difficulty must be one of {', '.join(DIFFICULTIES)}")
    if "tags" in meta and not _is_str_list(meta["tags"]):
        cf.problem(("tags",), "tags must be a list of words")
    if "minutes" in meta:
        _check_minutes(cf, ("minutes",), meta["minutes"])
    if "sources" in meta:
        _check_sources(cf, meta["sources"])
    brief = meta.get("brief")
    if "brief" in meta:
        if not isinstance(brief, dict):
            cf.problem(("brief",), "brief must be a mapping")
        else:
            _check_keys(cf, ("brief",), brief, BRIEF_KEYS, {"model"}, "brief")
            for key in BRIEF_NUMBERS & brief.keys():
                _check_number(cf, ("brief", key), brief[key], positive=True)
            if not {"ttft_p99_ms", "tpot_p99_ms", "e2e_p99_ms"} & brief.keys():
                cf.problem(
                    ("brief",), "brief needs a latency SLO (ttft_p99_ms, tpot_p99_ms or e2e_p99_ms)"
                )
            if "constraints" in brief and not _is_str_list(brief["constraints"]):
                cf.problem(("brief", "constraints"), "constraints must be a list of sentences")
    steps = meta.get("steps")
    if "steps" in meta:
        if not isinstance(steps, dict):
            cf.problem(("steps",), "steps must be a mapping of step keys")
        else:
            ids: dict[str, tuple] = {}
            for key in STEP_KEYS:
                if key not in steps:
                    cf.problem(("steps",), f"missing step '{key}'")
            for key, step in steps.items():
                if key not in STEP_KEYS:
                    cf.problem(
                        ("steps", key), f"unknown step '{key}' (steps are {', '.join(STEP_KEYS)})"
                    )
                    continue
                _validate_step(cf, key, step, ids, concept_slugs)
    if "tests" in meta:
        _validate_tests(cf, meta["tests"], steps if isinstance(steps, dict) else {})
    _check_body_html(cf)
    _check_direction_controls(cf)
    if not cf.problems:
        _check_probes_keep_answers(cf)
    # In the file's order (checks run key by key, so a rubric's problem could come before the
    # brief's): the editor's list and a refused publish's first problem read top to bottom.
    return sorted(cf.problems, key=lambda problem: problem.line)


def _validate_step(cf: ContentFile, key: str, step: Any, ids: dict, concepts: set | None) -> None:
    path = ("steps", key)
    if not isinstance(step, dict):
        cf.problem(path, f"step '{key}' must be a mapping")
        return
    allowed = STEP_COMMON_KEYS | STEP_EXTRA_KEYS.get(key, set())
    required = {"prompt", "rubric", "reference"}
    if key == "estimate":
        required |= {"givens", "quantities"}
    _check_keys(cf, path, step, allowed, required, f"step '{key}'")
    if "minutes" in step:
        _check_minutes(cf, (*path, "minutes"), step["minutes"])
    for text_key in ("prompt", "reference", "interviewer_notes"):
        if text_key in step:
            _check_text(cf, (*path, text_key), step[text_key], markdown=True)
    if "rubric" in step:
        _validate_rubric(cf, (*path, "rubric"), step["rubric"], ids, concepts)
    _validate_step_diagram(cf, key, path, step)
    _check_concepts(cf, (*path, "concepts"), step.get("concepts"), concepts)
    if "misconceptions" in step:
        _validate_misconceptions(cf, path, step, ids, concepts)
    if key == "estimate":
        _validate_estimate(cf, path, step, ids)
    if key == "tradeoffs":
        follow_ups = step.get("follow_ups", [])
        if not isinstance(follow_ups, list):
            cf.problem((*path, "follow_ups"), "follow_ups must be a list")
            return
        for fpath, fu in _mappings(
            cf, (*path, "follow_ups"), follow_ups, "a follow-up must be a mapping"
        ):
            _check_keys(cf, fpath, fu, FOLLOW_UP_KEYS, FOLLOW_UP_KEYS - {"concepts"}, "follow-up")
            _check_id(cf, (*fpath, "id"), fu.get("id"), ids, "follow-up")
            for text_key in ("prompt", "reference"):
                if text_key in fu:
                    _check_text(cf, (*fpath, text_key), fu[text_key], markdown=True)
            if "rubric" in fu:
                _validate_rubric(cf, (*fpath, "rubric"), fu["rubric"], ids, concepts)
            _check_concepts(cf, (*fpath, "concepts"), fu.get("concepts"), concepts)


def _validate_rubric(cf: ContentFile, path: tuple, rubric: Any, ids: dict, concepts) -> None:
    if not isinstance(rubric, list) or not rubric:
        cf.problem(path, "rubric must be a non-empty list of points")
        return
    for ppath, point in _mappings(cf, path, rubric, "a rubric point must be a mapping"):
        _check_keys(
            cf, ppath, point, RUBRIC_KEYS, RUBRIC_KEYS - RUBRIC_OPTIONAL_KEYS, "rubric point"
        )
        _check_id(cf, (*ppath, "id"), point.get("id"), ids, "rubric")
        if "says" in point:
            _check_text(cf, (*ppath, "says"), point["says"])
        if "probe" in point:
            _check_probe(cf, (*ppath, "probe"), point["probe"])
        if "weight" in point:
            _check_number(cf, (*ppath, "weight"), point["weight"], positive=True)
        _check_concepts(cf, (*ppath, "concepts"), point.get("concepts"), concepts)
        rec = point.get("recognise")
        if "recognise" not in point:
            continue
        if not isinstance(rec, dict):
            cf.problem((*ppath, "recognise"), "recognise must be a mapping with 'all' groups")
            continue
        _check_keys(cf, (*ppath, "recognise"), rec, RECOGNISE_KEYS, {"all"}, "recognise")
        for group_key in ("all", "partial"):
            groups = rec.get(group_key)
            if group_key not in rec:
                continue
            gpath = (*ppath, "recognise", group_key)
            if (
                not isinstance(groups, list)
                or not groups
                or not all(_is_str_list(g) and g and all(s.strip() for s in g) for g in groups)
            ):
                cf.problem(
                    gpath,
                    f"recognise.{group_key} must be a list of non-empty phrase "
                    "lists, e.g. [[peak], [qps, requests per second]]",
                )


def _validate_step_diagram(cf: ContentFile, key: str, path: tuple, step: dict) -> None:
    """A step's diagram keys: `diagram: true` (a diagram box on a step other than
    architecture), `reference_diagram` (Mermaid text the diagram engine reads, each syntax
    error at its file line), and rubric points' `diagram` rules (only where there is a box)."""
    if "diagram" in step and not isinstance(step["diagram"], bool):
        cf.problem((*path, "diagram"), "diagram must be true or false")
    has_box = key == DIAGRAM_STEP or step.get("diagram") is True
    if "reference_diagram" in step:
        _check_reference_diagram(cf, (*path, "reference_diagram"), step["reference_diagram"])
        if not has_box:
            cf.problem(
                (*path, "reference_diagram"),
                f"step '{key}' has no diagram box: add 'diagram: true' to give it one",
            )
    rubric = step.get("rubric") if isinstance(step.get("rubric"), list) else []
    for i, point in enumerate(rubric):
        if not isinstance(point, dict) or "diagram" not in point:
            continue
        rpath = (*path, "rubric", i, "diagram")
        _check_diagram_rule(cf, rpath, point["diagram"])
        if not has_box:
            cf.problem(
                rpath, f"step '{key}' has no diagram box: add 'diagram: true' to give it one"
            )


def _check_reference_diagram(cf: ContentFile, path: tuple, text: Any) -> None:
    from diagrams import DiagramError, parse_diagram

    if not isinstance(text, str) or not text.strip():
        cf.problem(path, "reference_diagram must be Mermaid flowchart text (after a '|' line)")
        return
    try:
        parse_diagram(text)
    except DiagramError as exc:
        # The text of a block scalar (`reference_diagram: |`) starts on the line after the key.
        line = cf.line_of(*path) + exc.line
        cf.problems.append(
            Problem(
                cf.path,
                line,
                f"reference_diagram: {exc.message} (its line {exc.line}, column {exc.column})",
            )
        )


def _check_diagram_rule(cf: ContentFile, path: tuple, rule: Any) -> None:
    """A rubric point's `diagram` rule: exactly one of `path` (two or more phrase groups) and
    `node` (one or more), and `edge_label` (a phrase list) only with a path."""
    example = "e.g. {path: [[gateway], [router], [vllm, replica]]} or {node: [[autoscal], [queue]]}"
    if not isinstance(rule, dict):
        cf.problem(path, f"diagram must be a mapping with 'path' or 'node', {example}")
        return
    _check_keys(cf, path, rule, DIAGRAM_RULE_KEYS, set(), "diagram rule")
    if ("path" in rule) == ("node" in rule):
        cf.problem(path, f"a diagram rule has exactly one of 'path' and 'node', {example}")
        return
    kind = "path" if "path" in rule else "node"
    groups = rule[kind]
    if not _phrase_groups_ok(groups) or (kind == "path" and len(groups) < 2):
        least = "two or more" if kind == "path" else "one or more"
        cf.problem(
            (*path, kind), f"diagram.{kind} must be {least} non-empty phrase lists, {example}"
        )
    if "edge_label" in rule:
        if kind != "path":
            cf.problem((*path, "edge_label"), "edge_label goes with a 'path' rule only")
        elif not (_is_str_list(rule["edge_label"]) and rule["edge_label"]) or not all(
            s.strip() for s in rule["edge_label"]
        ):
            cf.problem(
                (*path, "edge_label"),
                "edge_label must be a non-empty list of phrases, e.g. [prefix aware, prefix hash]",
            )


def _validate_misconceptions(cf: ContentFile, path: tuple, step: dict, ids: dict, concepts) -> None:
    """A step's wrong ideas: ids unique in the question (they share the rubric's namespace,
    so a verdict never confuses the two), `contradicts` naming points of this step's own
    rubric, and `recognise.all` groups as for a rubric point."""
    mpath = (*path, "misconceptions")
    items = step["misconceptions"]
    if not isinstance(items, list) or not items:
        cf.problem(mpath, "misconceptions must be a non-empty list of mappings")
        return
    rubric = step.get("rubric") if isinstance(step.get("rubric"), list) else []
    own_points = {p.get("id") for p in rubric if isinstance(p, dict)}
    for ipath, item in _mappings(cf, mpath, items, "a misconception must be a mapping"):
        _check_keys(
            cf, ipath, item, MISCONCEPTION_KEYS, MISCONCEPTION_KEYS - {"concepts"}, "misconception"
        )
        _check_id(cf, (*ipath, "id"), item.get("id"), ids, "misconception")
        for text_key in ("idea", "explanation"):
            if text_key in item:
                _check_text(
                    cf, (*ipath, text_key), item[text_key], markdown=text_key == "explanation"
                )
        _check_concepts(cf, (*ipath, "concepts"), item.get("concepts"), concepts)
        contradicts = item.get("contradicts")
        if "contradicts" in item:
            if not _is_str_list(contradicts) or not contradicts:
                cf.problem(
                    (*ipath, "contradicts"),
                    "contradicts must be a non-empty list of this step's rubric point ids",
                )
            else:
                for j, point_id in enumerate(contradicts):
                    if point_id not in own_points:
                        cf.problem(
                            (*ipath, "contradicts", j),
                            f"'{point_id}' is not a rubric point of this step "
                            f"(its points: {', '.join(sorted(str(p) for p in own_points))})",
                        )
        if "recognise" not in item:
            continue
        rec = item["recognise"]
        if not isinstance(rec, dict):
            cf.problem((*ipath, "recognise"), "recognise must be a mapping with 'all' groups")
            continue
        _check_keys(cf, (*ipath, "recognise"), rec, {"all"}, {"all"}, "recognise")
        groups = rec.get("all")
        if "all" in rec and not _phrase_groups_ok(groups):
            cf.problem(
                (*ipath, "recognise", "all"),
                "recognise.all must be a list of non-empty phrase lists, "
                "e.g. [[autoscal, scale out], [gpu util]]",
            )


def _phrase_groups_ok(groups: Any) -> bool:
    return (
        isinstance(groups, list)
        and bool(groups)
        and all(_is_str_list(g) and g and all(s.strip() for s in g) for g in groups)
    )


def _validate_estimate(cf: ContentFile, path: tuple, step: dict, ids: dict) -> None:
    givens = step.get("givens")
    names: dict[str, str] = {}
    given_paths: dict[str, tuple] = {}
    if isinstance(givens, list):
        for gpath, given in _mappings(
            cf, (*path, "givens"), givens, "a given must be a mapping with name, label and value"
        ):
            _check_keys(cf, gpath, given, GIVEN_KEYS, GIVEN_KEYS, "given")
            name = given.get("name")
            if not isinstance(name, str) or not NAME_RE.match(name):
                cf.problem((*gpath, "name"), "a given's name must be an identifier")
                continue
            if name in names:
                cf.problem((*gpath, "name"), f"duplicate given '{name}'")
                continue
            value = str(given.get("value", ""))
            error = formula_error(value, names)
            if error:
                cf.problem((*gpath, "value"), f"given '{name}': {error}")
            names[name] = value
            given_paths[name] = gpath
    elif "givens" in step:
        cf.problem((*path, "givens"), "givens must be a list")
    quantities = step.get("quantities")
    if not isinstance(quantities, list):
        if "quantities" in step:
            cf.problem((*path, "quantities"), "quantities must be a list")
        return
    known = dict(names)
    for qpath, qty in _mappings(
        cf, (*path, "quantities"), quantities, "a quantity must be a mapping"
    ):
        _check_keys(
            cf,
            qpath,
            qty,
            QUANTITY_KEYS,
            {"id", "label", "formula", "unit", "tolerance"},
            "quantity",
        )
        qid = qty.get("id")
        if not isinstance(qid, str) or not NAME_RE.match(qid):
            cf.problem((*qpath, "id"), "a quantity id must be an identifier (letters, digits, _)")
            continue
        _check_id(cf, (*qpath, "id"), qid, ids, "quantity")
        if qid in names:
            cf.problem((*qpath, "id"), f"quantity '{qid}' has the same name as a given")
        if "tolerance" in qty:
            tol = qty["tolerance"]
            if not isinstance(tol, int | float) or isinstance(tol, bool) or not 0 < tol < 1:
                cf.problem((*qpath, "tolerance"), "tolerance must be a number between 0 and 1")
        if "rounding" in qty and qty["rounding"] not in ROUNDINGS:
            cf.problem((*qpath, "rounding"), f"rounding must be one of {', '.join(ROUNDINGS)}")
        formula = qty.get("formula")
        if isinstance(formula, str | int | float) and not isinstance(formula, bool):
            error = formula_error(str(formula), known, to_unit=qty.get("unit"))
            if error and error.startswith("Cannot convert") and "unit" in qty:
                # The formula evaluates; it is the `unit` that does not fit it, or a given
                # written without its unit (a bandwidth as a bare number) that the formula uses.
                unitless = "".join(
                    f" The given '{name}' on line {cf.line_of(*given_paths[name], 'value')} "
                    "has no unit: if it should have one, add it."
                    for name in _unitless_givens(str(formula), names, known)
                    if name in given_paths
                )
                cf.problem(
                    (*qpath, "unit"),
                    f"quantity '{qid}': {error} Or fix the formula on line "
                    f"{cf.line_of(*qpath, 'formula')}.{unitless}",
                )
            elif error and error.startswith("the unit ") and "unit" in qty:
                # The formula evaluates; the `unit` written is no unit at all.
                cf.problem((*qpath, "unit"), f"quantity '{qid}': {error}")
            elif error:
                cf.problem((*qpath, "formula"), f"quantity '{qid}': {error}")
        elif "formula" in qty:
            cf.problem((*qpath, "formula"), "formula must be a napkin-math expression")
        mistakes = qty.get("mistakes", [])
        if not isinstance(mistakes, list):
            cf.problem((*qpath, "mistakes"), "mistakes must be a list")
            mistakes = []
        for mpath, mistake in _mappings(
            cf, (*qpath, "mistakes"), mistakes, "a mistake must be a mapping with formula and hint"
        ):
            _check_keys(cf, mpath, mistake, MISTAKE_KEYS, {"hint"}, "mistake")
            if ("formula" in mistake) == ("replace" in mistake):
                cf.problem(mpath, "a mistake needs exactly one of formula or replace")
            if isinstance(mistake.get("replace"), dict):
                for name, text in mistake["replace"].items():
                    error = (
                        None
                        if name in known
                        else f"'{name}' is not a given (the givens: {', '.join(names) or 'none'})"
                    )
                    error = error or formula_error(str(text), known)
                    if error:
                        cf.problem((*mpath, "replace", name), f"mistake of '{qid}': {error}")
            elif "replace" in mistake:
                cf.problem((*mpath, "replace"), "replace must map givens to expressions")
            if "formula" in mistake:
                error = formula_error(str(mistake["formula"]), known)
                if error:
                    cf.problem((*mpath, "formula"), f"mistake of '{qid}': {error}")
        if isinstance(formula, str | int | float):
            known[qid] = str(formula)


def _rubric_ids(part: Any) -> list[str]:
    rubric = part.get("rubric") if isinstance(part, dict) else None
    if not isinstance(rubric, list):
        return []
    return [str(p["id"]) for p in rubric if isinstance(p, dict) and "id" in p]


def _misconception_ids(part: Any) -> list[str]:
    items = part.get("misconceptions") if isinstance(part, dict) else None
    if not isinstance(items, list):
        return []
    return [str(m["id"]) for m in items if isinstance(m, dict) and "id" in m]


def _validate_tests(cf: ContentFile, tests: Any, steps: dict) -> None:
    """The `tests:` key: per step key or tradeoffs follow-up id, a list of answer tests
    (answer, expect, offline, flags) and, under `estimate`, napkin tests (quantity, answer,
    verdict, mistake, hint). Rubric, misconception and quantity ids must exist where the test
    points them."""
    from planner.engine.checker import VERDICTS as NAPKIN_VERDICTS

    path = ("tests",)
    if not isinstance(tests, dict):
        cf.problem(path, "tests must be a mapping of step keys (or follow-up ids) to lists")
        return
    parts: dict[str, list[str]] = {k: _rubric_ids(steps.get(k)) for k in STEP_KEYS}
    wrong_ideas = {k: _misconception_ids(steps.get(k)) for k in STEP_KEYS}
    tradeoffs = steps.get("tradeoffs")
    follow_ups = tradeoffs.get("follow_ups") if isinstance(tradeoffs, dict) else None
    for fu in follow_ups if isinstance(follow_ups, list) else ():
        if isinstance(fu, dict) and isinstance(fu.get("id"), str):
            parts[fu["id"]] = _rubric_ids(fu)
    estimate = steps.get("estimate")
    quantities = estimate.get("quantities") if isinstance(estimate, dict) else None
    quantity_ids = (
        [str(q["id"]) for q in quantities or () if isinstance(q, dict) and "id" in q]
        if isinstance(quantities, list)
        else []
    )
    for key, entries in tests.items():
        kpath = (*path, key)
        if key not in parts:
            cf.problem(
                kpath,
                f"tests for '{key}': not a step key or a tradeoffs follow-up id "
                f"(known: {', '.join(parts)})",
            )
            continue
        if not isinstance(entries, list) or not entries:
            cf.problem(kpath, f"tests for '{key}' must be a non-empty list of tests")
            continue
        for tpath, entry in _mappings(
            cf, kpath, entries, "a test must be a mapping (answer and expect, or quantity)"
        ):
            if "name" in entry:
                _check_text(cf, (*tpath, "name"), entry["name"])
            if "quantity" in entry:
                if key != "estimate":
                    cf.problem((*tpath, "quantity"), "napkin tests belong under 'estimate'")
                    continue
                _check_keys(cf, tpath, entry, NAPKIN_TEST_KEYS,
                            {"quantity", "answer", "verdict"}, "napkin test")  # fmt: skip
                if entry["quantity"] not in quantity_ids:
                    cf.problem(
                        (*tpath, "quantity"),
                        f"no quantity '{entry['quantity']}' in the estimate step "
                        f"(quantities: {', '.join(quantity_ids) or 'none'})",
                    )
                for text_key in ("answer", "mistake", "hint"):
                    if text_key in entry:
                        _check_text(cf, (*tpath, text_key), entry[text_key])
                if "worksheet" in entry and not isinstance(entry["worksheet"], str):
                    cf.problem((*tpath, "worksheet"), "worksheet must be text, one line each")
                if "verdict" in entry and entry["verdict"] not in NAPKIN_VERDICTS:
                    cf.problem(
                        (*tpath, "verdict"),
                        f"a napkin verdict is one of {', '.join(NAPKIN_VERDICTS)}",
                    )
                continue
            _check_keys(cf, tpath, entry, ANSWER_TEST_KEYS, {"answer"}, "test")
            if "expect" not in entry and "flags" not in entry:
                cf.problem(
                    tpath,
                    "a test needs expect (the verdict on each rubric point) or flags (the "
                    "wrong ideas its answer states)",
                )
            if "answer" in entry and not isinstance(entry["answer"], str):
                cf.problem((*tpath, "answer"), "'answer' must be text")
            if "flags" in entry:
                _check_flags(cf, (*tpath, "flags"), entry["flags"], key, wrong_ideas.get(key))
            if "diagram" in entry:
                _check_test_diagram(cf, (*tpath, "diagram"), entry["diagram"], key, steps)
            for verdicts_key in ("expect", "offline"):
                if verdicts_key not in entry:
                    continue
                verdicts = entry[verdicts_key]
                if not isinstance(verdicts, dict) or not verdicts:
                    cf.problem(
                        (*tpath, verdicts_key),
                        f"{verdicts_key} must map rubric point ids to hit, partial or miss",
                    )
                    continue
                for point_id, verdict in verdicts.items():
                    vpath = (*tpath, verdicts_key, point_id)
                    if point_id not in parts[key]:
                        cf.problem(
                            vpath,
                            f"no rubric point '{point_id}' in '{key}' "
                            f"(points: {', '.join(parts[key]) or 'none'})",
                        )
                    elif verdict not in RUBRIC_VERDICTS:
                        cf.problem(
                            vpath,
                            f"verdict of '{point_id}' must be one of {', '.join(RUBRIC_VERDICTS)}",
                        )
                    elif verdicts_key == "offline" and point_id not in (
                        entry.get("expect") if isinstance(entry.get("expect"), dict) else {}
                    ):
                        cf.problem(
                            vpath,
                            f"offline names '{point_id}', which expect does not: give the "
                            "human verdict in expect first",
                        )


def _check_flags(cf: ContentFile, path: tuple, flags: Any, key: str, known: list | None) -> None:
    """An answer test's `flags`: ids of the step's misconceptions its answer states. A
    follow-up has no wrong ideas of its own (`known` is None)."""
    if known is None:
        cf.problem(path, f"'{key}' is a follow-up: it has no misconceptions to flag")
        return
    if not isinstance(flags, list) or not flags or not all(isinstance(f, str) for f in flags):
        cf.problem(path, "flags must be a non-empty list of misconception ids of the step")
        return
    for index, misconception_id in enumerate(flags):
        if misconception_id not in known:
            cf.problem(
                (*path, index),
                f"no misconception '{misconception_id}' in '{key}' "
                f"(misconceptions: {', '.join(known) or 'none'})",
            )


def _check_test_diagram(cf: ContentFile, path: tuple, text: Any, key: str, steps: dict) -> None:
    """An answer test's `diagram`: the candidate's Mermaid text, graded with the answer; only
    for a step with a diagram box. A syntax error is allowed (a test may show how an
    unreadable diagram is graded), so only the type is checked here."""
    step = steps.get(key)
    has_box = key == DIAGRAM_STEP or (isinstance(step, dict) and step.get("diagram") is True)
    if not has_box:
        cf.problem(path, f"'{key}' has no diagram box, so its tests cannot carry a diagram")
    elif not isinstance(text, str):
        cf.problem(path, "'diagram' must be Mermaid flowchart text (after a '|' line)")


def formula_error(formula: str, givens: dict[str, str], to_unit: Any = None) -> str | None:
    """Why a formula over these givens does not evaluate (unknown name, bad unit), or None.

    The formula is evaluated as the author wrote it, and only then converted to `to_unit`:
    appending `in UNIT` to the text would make an error inside it (an unclosed '(') point at
    the appended 'in', at a column past the end of the formula."""
    from planner.engine import NapkinError, evaluate_expression, evaluate_worksheet

    lines = [f"{name} = {expr}" for name, expr in givens.items()]
    try:
        results = evaluate_worksheet([*lines, formula], {})
    except NapkinError as exc:
        return _with_names(str(exc), givens)
    last = results[-1]
    if last.error:
        return _given_error(str(last.error), givens, results[:-1]) or _with_names(
            str(last.error), givens
        )
    if not to_unit:
        return None
    scope = {row.name: row.quantity for row in results[:-1] if row.name and row.quantity}
    converted = evaluate_expression(formula, scope, to_unit=str(to_unit))
    if converted.error and converted.error.startswith("Cannot convert"):
        return f"{converted.error} {_what_it_gives(last)}"
    if converted.error:
        return f"the unit {str(to_unit)!r}: {converted.error}"
    return None


_NAME = re.compile(r"[A-Za-z_]\w*")


def _unitless_givens(formula: str, givens: dict[str, str], known: dict[str, str]) -> list[str]:
    """The givens a formula uses (directly, or through the quantities before it in `known`)
    whose value has no unit, in the givens' order. Such givens are legitimate (a layer count,
    an MFU), but one that should carry a unit makes the formula's unit wrong."""
    used: set[str] = set()
    todo = _NAME.findall(formula)
    while todo:
        name = todo.pop()
        if name in used or name not in known:
            continue
        used.add(name)
        if name not in givens:  # a quantity before this one: the names of its formula
            todo.extend(_NAME.findall(known[name]))
    from planner.engine import NapkinError, evaluate_worksheet
    from planner.engine.units import DIMENSIONLESS

    try:
        rows = evaluate_worksheet([f"{name} = {expr}" for name, expr in givens.items()], {})
    except NapkinError:
        return []
    return [
        name
        for name, row in zip(givens, rows, strict=False)
        if name in used
        and not row.error
        and row.quantity is not None
        and row.quantity.dim == DIMENSIONLESS
    ]


def _given_error(message: str, givens: dict[str, str], rows: list) -> str | None:
    """A formula's unknown name that is a given which does not evaluate itself (a name the
    worksheet cannot take, such as `T`, a number suffix): that given's own error, which is
    the cause, instead of "unknown name" beside a list that names it."""
    from planner.engine.worksheet import unknown_name

    name = unknown_name(message)
    if name not in givens:
        return None
    for (given, _expr), row in zip(givens.items(), rows, strict=False):
        if given == name and row.error:
            return f"the given {name!r} cannot be used: {row.error}"
    return None


def _with_names(message: str, givens: dict[str, str]) -> str:
    """An unknown name's message with the names the formula may use (a typo's fix)."""
    from planner.engine.worksheet import unknown_name

    if unknown_name(message) is None:
        return message
    if not givens:
        return f"{message} No names are defined before it."
    return f"{message} Names it may use: {', '.join(givens)}."


def _what_it_gives(row: Any) -> str:
    """What a formula that evaluated gives, in words and as a unit to write, e.g. "The formula
    gives time (15.08 ms with these givens): write `unit` as a unit of time, such as ms." """
    from planner.engine.units import describe_dim

    if getattr(row, "quantity", None) is None:
        return ""
    kind = describe_dim(row.quantity.dim)
    unit = row.unit or ""
    value = (
        f" ({row.value:.4g} {unit}".rstrip() + " with these givens)"
        if row.value is not None
        else ""
    )
    if not unit:
        return f'The formula gives {kind}{value}: write unit: "" for it.'
    return f"The formula gives {kind}{value}: write `unit` as a unit of {kind}, such as {unit}."


def _mappings(
    cf: ContentFile, path: tuple, items: list, problem: str
) -> Iterator[tuple[tuple, dict]]:
    """Each item of `items` that is a mapping, with its path under `path`; `problem` is
    reported for each item that is not one."""
    for i, item in enumerate(items):
        if isinstance(item, dict):
            yield (*path, i), item
        else:
            cf.problem((*path, i), problem)


def _check_keys(cf, path, mapping, allowed, required, what) -> None:
    for key in mapping:
        if key not in allowed:
            cf.problem(
                (*path, key),
                f"unknown key '{key}' in {what} (allowed: {', '.join(sorted(allowed))})",
            )
    for key in sorted(required - mapping.keys()):
        cf.problem(path, f"{what} is missing '{key}'")


def _check_id(cf, path, value, ids: dict, what: str) -> None:
    if not isinstance(value, str) or not RUBRIC_ID_RE.match(value):
        cf.problem(path, f"{what} id must be lowercase letters, digits, '-' or '_'")
        return
    if value in ids:
        cf.problem(path, f"duplicate id '{value}' (first used on line {cf.line_of(*ids[value])})")
        return
    ids[value] = path


def _check_text(cf, path, value, max_chars: int | None = None, *, markdown: bool = False) -> None:
    """Non-empty text of at most `max_chars`; a `markdown` field's raw HTML, which the page
    removes, and its formulas that do not render are problems at their lines."""
    if not isinstance(value, str) or not value.strip():
        cf.problem(path, f"'{path[-1]}' must be non-empty text")
    elif max_chars is not None and len(value) > max_chars:
        cf.problem(path, f"'{path[-1]}' is {len(value)} characters; at most {max_chars}")
    elif markdown:
        key_line = cf.line_of(*path)
        raw = cf.text.split("\n")
        for index, needle, message in _markdown_problems(value):
            # A block scalar's line `index` sits below its key; a one-line value on the key's
            # line; else the first line from the key on that holds what is wrong.
            below = key_line + 1 + index
            if below <= len(raw) and needle in raw[below - 1]:
                line = below
            else:
                line = next(
                    (n for n in range(key_line, len(raw) + 1) if needle in raw[n - 1]), key_line
                )
            cf.problems.append(Problem(cf.path, line, message))


def _check_body_html(cf: ContentFile) -> None:
    """The Markdown body's raw HTML and formulas that do not render (the scenario's, a
    note's), each at its line."""
    body = "\n".join(cf.text.split("\n")[cf.body_line - 1 :])
    for index, _needle, message in _markdown_problems(body):
        cf.problems.append(Problem(cf.path, cf.body_line + index, message))


# An HTML tag as Markdown passes it through: `<name` then a space, '/' or '>' (so neither an
# autolink such as <https://...> nor a comparison such as "a <5 ms" is one).
_HTML_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)(?=[\s/>])")
# The longest formula a problem quotes whole.
_FORMULA_QUOTED_CHARS = 60


def _markdown_problems(text: str) -> list[tuple[int, str, str]]:
    """(line index in `text`, a piece of that line to find it by in the file, the problem) for
    what candidates would not see as written in this Markdown (questionbank.rendering): each
    line's raw HTML that the page's sanitiser removes (an iframe, a script, an img), and each
    formula ($...$, $$...$$) that does not render as math (`latex_problem`). Code, in
    backticks, in a fence or indented, shows as written and is left alone; so is HTML inside
    a formula, which goes to the converter, not the sanitiser."""
    from questionbank.rendering import _CODE, ALLOWED_TAGS, latex_problem

    tags_at: dict[int, list[str]] = {}
    formulas: list[tuple[int, str, str]] = []
    offset = 0
    for i, piece in enumerate(_CODE.split(text)):
        if i % 2 == 0:
            maths = _formulas(piece)
            spans = [match.span() for match, _display in maths]
            for match, display in maths:
                latex = match.group(1).strip() if display else match.group(1)
                why = latex_problem(latex, display=display)
                if why is None:
                    continue
                at = offset + match.start(1) + (len(match.group(1)) - len(match.group(1).lstrip()))
                shown = (
                    latex
                    if len(latex) <= _FORMULA_QUOTED_CHARS
                    else latex[:_FORMULA_QUOTED_CHARS] + "…"
                )
                formulas.append(
                    (
                        text.count("\n", 0, at),
                        latex.split("\n", 1)[0],
                        f"the formula `{shown}` does not render: {why}; candidates would see "
                        "its LaTeX source instead",
                    )
                )
            for match in _HTML_TAG.finditer(piece):
                if match.group(2).lower() in ALLOWED_TAGS:
                    continue
                if any(start <= match.start() < end for start, end in spans):
                    continue
                at = offset + match.start()
                line_start = text.rfind("\n", 0, at) + 1
                if text[line_start:at].startswith(("    ", "\t")):  # an indented code block
                    continue
                tag = f"<{match.group(2)}"
                tags = tags_at.setdefault(text.count("\n", 0, at), [])
                if tag not in tags:
                    tags.append(tag)
        offset += len(piece)
    html = [(index, tags[0], _removed_html_message(tags)) for index, tags in tags_at.items()]
    return sorted(html + formulas, key=lambda problem: problem[0])


def _formulas(markdown: str) -> list[tuple[re.Match, bool]]:
    """Each formula of `markdown` (no code in it) as the renderer finds it, and whether it
    is a display one. The renderer takes display math out first, then inline math from what
    is left: display formulas are masked here before the inline pass (their lengths kept, so
    offsets hold), with line breaks, as the renderer sets them apart as paragraphs."""
    from questionbank.rendering import _DISPLAY_MATH, _INLINE_MATH

    found = [(match, True) for match in _DISPLAY_MATH.finditer(markdown)]
    masked = _DISPLAY_MATH.sub(lambda match: "\n" * len(match.group()), markdown)
    return found + [(match, False) for match in _INLINE_MATH.finditer(masked)]


def _removed_html_message(tags: list[str]) -> str:
    shown = ", ".join(f"{tag}>" for tag in tags)
    return (
        f"raw HTML ({shown}) is removed from the page, so candidates never see it: write it "
        "in Markdown, or in `backticks` to show it as code"
    )


# Bidirectional embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069): no
# one sees them in the editor, yet on a candidate's page they reverse the text after them.
_DIRECTION_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")


def _check_direction_controls(cf: ContentFile) -> None:
    """A problem at each line of the file that holds a bidirectional control."""
    for number, line in enumerate(cf.text.split("\n"), start=1):
        codes = sorted({f"U+{ord(ch):04X}" for ch in _DIRECTION_CONTROL.findall(line)})
        if codes:
            one = len(codes) == 1
            what = "an invisible direction control" if one else "invisible direction controls"
            does = "reverses or reorders" if one else "reverse or reorder"
            cf.problems.append(
                Problem(
                    cf.path,
                    number,
                    f"{what} ({', '.join(codes)}) on this line {does} the text after it on "
                    f"the candidate's page: remove {'it' if one else 'them'}",
                )
            )


SOURCE_KEYS = {"title", "url", "facts"}


def _check_sources(cf, sources) -> None:
    """Where a question's figures come from: each source a title, an http(s) address and,
    optionally, which facts of the question it gives."""
    if not isinstance(sources, list) or not sources:
        cf.problem(("sources",), "sources must be a list of {title, url, facts}")
        return
    for path, source in _mappings(
        cf, ("sources",), sources, "a source must be a mapping with title and url"
    ):
        _check_keys(cf, path, source, SOURCE_KEYS, {"title", "url"}, "source")
        for key in ("title", "facts"):
            if key in source:
                _check_text(cf, (*path, key), source[key])
        url = source.get("url")
        if "url" in source and (
            not isinstance(url, str) or not re.match(r"https?://[^\s<>\"]+$", url)
        ):
            cf.problem((*path, "url"), "url must be an http(s) address")


PROBE_MAX_CHARS = 300


def _check_probe(cf, path, value) -> None:
    """A probe is one question a mock interviewer asks as written (the model may reword it):
    plain text, short, ending in a question mark."""
    if not isinstance(value, str) or not value.strip():
        cf.problem(path, "'probe' must be non-empty text: the question to ask")
    elif len(value.strip()) > PROBE_MAX_CHARS:
        cf.problem(path, f"'probe' must be one question of at most {PROBE_MAX_CHARS} characters")
    elif not value.strip().endswith("?"):
        cf.problem(path, "'probe' must be a question (end it with '?')")


# Figures a probe may state without giving an answer away: numerals, and numbers spelt out up
# to twenty ("ten replicas"). A clock time (9:00) is not a figure.
_NUMERAL_RE = re.compile(r"(?<![\w.:])\d[\d,]*(?:\.\d+)?(?![\d:])")
_NUMBER_WORDS = {
    word: float(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
# A probe's figure counts as an answer within the quantity's own tolerance, or 2% where that is
# tighter, since a probe rounds ("about 65 s" for 64.7 s).
PROBE_FIGURE_SLACK = 0.02


_AFTER_FIGURE_RE = re.compile(r"\s*([A-Za-z][A-Za-z/]*)")


def _figures(text: str) -> list[tuple[float, str]]:
    """Each figure in `text` with the word after it, which may be its unit ("3 QPS")."""
    found = [(m.group().replace(",", ""), m.end()) for m in _NUMERAL_RE.finditer(text)]
    found += [
        (str(_NUMBER_WORDS[m.group().lower()]), m.end())
        for m in re.finditer(r"[A-Za-z]+", text)
        if m.group().lower() in _NUMBER_WORDS
    ]
    figures = []
    for number, end in found:
        after = _AFTER_FIGURE_RE.match(text, end)
        figures.append((float(number), after.group(1) if after else ""))
    return figures


def _in_answer_unit(figure: float, word: str, answer: Any, unit: str) -> float | None:
    """A probe's figure in the answer's unit: as written where it counts something ("ten
    replicas", "17 fit") and the answer is a count too, or the word after it is a count like
    the answer's (tokens and requests are counts, as a plain
    number is: authors give a token budget as either); converted where it is a unit of the
    answer's dimension ("140 MB" against an answer in GB); None where it is a unit of another
    dimension ("3 QPS" is no count of streams)."""
    from planner.engine import evaluate_expression

    written = f"{figure:g} {word}"
    quantity = evaluate_expression(written, {}).quantity if word else None
    if quantity is None:  # a count of something ("60 calls"): only a count is its answer
        return figure if not any(_counted(answer.dim)) else None
    if _counted(quantity.dim) != _counted(answer.dim):
        return None
    if quantity.dim != answer.dim or not unit:
        return figure
    converted = evaluate_expression(written, {}, to_unit=unit)
    return float(converted.value) if converted.error is None else figure


def _counted(dim: tuple) -> tuple:
    """A dimension with tokens and requests read as counts."""
    from planner.engine.units import BASE_SYMBOLS

    counts = {BASE_SYMBOLS.index("tok"), BASE_SYMBOLS.index("req")}
    return tuple(0 if i in counts else power for i, power in enumerate(dim))


def _check_probes_keep_answers(cf: ContentFile) -> None:
    """A probe must not state a figure the napkin-math step checks: a mock interviewer asks it
    word for word, perhaps before the candidate has worked the figure out, and while the mock
    runs the checker's verdicts and expected values are withheld. So too a later step's prompt
    and a follow-up's. A figure the candidate is already shown (the scenario, the brief, a
    given, the napkin-math prompt) is no answer."""
    from planner.engine import evaluate_expression, evaluate_worksheet, givens_from_estimate

    spec = question_spec(cf)
    estimate = spec.step("estimate")
    # The expected values as the checker works them out: the givens, then every quantity.
    lines = [f"{k} = {v}" for k, v in givens_from_estimate(estimate.estimate_dict()).items()]
    rows = evaluate_worksheet(lines, {})
    scope = {row.name: row.quantity for row in rows if row.name and row.quantity is not None}
    answers = []
    for qty in estimate.quantities:
        if qty.id not in scope:
            continue
        result = evaluate_expression(qty.id, scope, to_unit=qty.unit or None)
        if result.error is None and result.quantity is not None:
            # The value in the quantity's unit, and its dimension (the quantity, in base units).
            answers.append((qty, float(result.value), result.quantity))
    shown = " ".join(
        [cf.body, *(str(v) for v in cf.meta.get("brief", {}).values())]
        + [f"{g.label} {g.value}" for g in estimate.givens]
        + [estimate.prompt]
    )
    known = {figure for figure, _ in _figures(shown)}
    asked = []  # (path, what asks, its text)
    for step in spec.steps:
        if step.key != "estimate":
            path = ("steps", step.key, "prompt")
            asked.append((path, f"the {step.key} step's prompt", step.prompt))
        rubrics = [(("steps", step.key, "rubric"), step.rubric)]
        for f, follow_up in enumerate(step.follow_ups):
            path = ("steps", step.key, "follow_ups", f)
            asked.append(((*path, "prompt"), f"the follow-up '{follow_up.id}'", follow_up.prompt))
            rubrics.append(((*path, "rubric"), follow_up.rubric))
        for path, rubric in rubrics:
            asked += [
                ((*path, i, "probe"), f"the probe of '{p.id}'", p.probe or "")
                for i, p in enumerate(rubric)
            ]
    for path, what, text in asked:
        for figure, word in _figures(text):
            if figure in known:
                continue
            for qty, value, answer in answers:
                said = _in_answer_unit(figure, word, answer, qty.unit)
                if said is None or said in (0, 1):  # "one replica" names no answer
                    continue
                slack = max(qty.tolerance, PROBE_FIGURE_SLACK) * abs(value)
                # A whole answer (a count, a rounded quantity) is stated whole.
                whole = qty.rounding or value == int(value)
                if said == value if whole else abs(said - value) <= slack:
                    cf.problem(
                        path,
                        f"{what} states {figure:g}, the napkin-math answer '{qty.id}' "
                        f"({value:.4g} {qty.unit}): a mock interviewer may ask it before the "
                        "candidate has worked it out. Ask without the figure.",
                    )
                    break


def _check_number(cf, path, value, *, positive: bool) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool) or (positive and value <= 0):
        cf.problem(path, f"'{path[-1]}' must be a positive number")


# A mock interview runs for the question's minutes, paced by its steps': a clock of days
# is a typo, and past timedelta's range it could not be started at all.
MAX_MINUTES = 240


def _check_minutes(cf, path, value) -> None:
    _check_number(cf, path, value, positive=True)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > MAX_MINUTES:
        cf.problem(path, f"'minutes' must be at most {MAX_MINUTES} (a mock interview's length)")


def _check_concepts(cf, path, value, concepts: set | None) -> None:
    if value is None:
        return
    if not _is_str_list(value):
        cf.problem(path, "concepts must be a list of concept slugs")
        return
    if concepts is None:
        return
    for i, slug in enumerate(value):
        if slug not in concepts:
            cf.problem((*path, i), f"broken concept link '{slug}' (no content/concepts/{slug}.md)")


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def validate_concept(cf: ContentFile, *, concept_slugs: set[str] | None) -> list[Problem]:
    """Check a concept note: slug, title, summary, related links, a body."""
    if cf.problems:
        return cf.problems
    _check_keys(cf, (), cf.meta, CONCEPT_KEYS, CONCEPT_KEYS - {"related"}, "concept")
    slug = cf.meta.get("slug")
    if not isinstance(slug, str) or not SLUG_RE.match(slug):
        cf.problem(("slug",), "slug must be up to 50 lowercase letters, digits and hyphens")
    elif Path(cf.path).stem != slug:
        cf.problem(("slug",), f"slug '{slug}' does not match the file name")
    for key in ("title", "summary"):
        if key in cf.meta:
            _check_text(cf, (key,), cf.meta[key], TEXT_MAX_CHARS[key])
    _check_concepts(cf, ("related",), cf.meta.get("related"), concept_slugs)
    if not cf.body.strip():
        cf.problems.append(Problem(cf.path, cf.body_line, "concept note has no body"))
    _check_body_html(cf)
    _check_direction_controls(cf)
    return sorted(cf.problems, key=lambda problem: problem.line)


# --- the content tree ---------------------------------------------------------------------


@dataclass
class ContentTree:
    """Every question and concept file under a content directory, parsed and validated."""

    questions: list[ContentFile]
    concepts: list[ContentFile]
    problems: list[Problem]


def question_paths(root: Path) -> list[Path]:
    root = Path(root)
    if root.is_file():
        return [root] if root.parent.name != "concepts" else []
    return sorted((root / "questions").glob("*.md")) if (root / "questions").is_dir() else []


def concept_paths(root: Path) -> list[Path]:
    root = Path(root)
    if root.is_file():
        return [root] if root.parent.name == "concepts" else []
    return sorted((root / "concepts").glob("*.md")) if (root / "concepts").is_dir() else []


def read_tree(root: Path | str, *, known_concepts: set[str] | None = None) -> ContentTree:
    """Parse and validate every content file under `root` (a directory or a single file).

    `known_concepts` adds concept slugs that exist elsewhere (e.g. already in the database)
    when `root` holds questions only.
    """
    root = Path(root)
    concepts = [parse_file(p) for p in concept_paths(root)]
    slugs = {c.meta.get("slug") for c in concepts if isinstance(c.meta.get("slug"), str)}
    slugs_for_check = slugs | (known_concepts or set())
    questions = [parse_file(p) for p in question_paths(root)]
    problems: list[Problem] = []
    for c in concepts:
        problems += validate_concept(c, concept_slugs=slugs_for_check)
    seen: dict[str, str] = {}
    for q in questions:
        problems += validate_question(q, concept_slugs=slugs_for_check)
        slug = q.meta.get("slug")
        if isinstance(slug, str):
            if slug in seen:
                problems.append(
                    Problem(
                        q.path, q.line_of("slug"), f"slug '{slug}' is also used by {seen[slug]}"
                    )
                )
            seen[slug] = q.path
    return ContentTree(questions, concepts, problems)


def load_question(
    path: str | Path, text: str | None = None, *, concept_slugs: set[str] | None = None
) -> tuple[QuestionSpec | None, list[Problem]]:
    """A question file (read from `path`, or `text` when given) as a typed spec.

    Returns (spec, problems): the spec is None whenever there is a problem, and every problem
    names its file:line. `concept_slugs` as for `validate_question`.
    """
    cf = parse_file(path, text)
    problems = validate_question(cf, concept_slugs=concept_slugs)
    if problems:
        return None, problems
    return question_spec(cf), []


def question_spec(cf: ContentFile) -> QuestionSpec:
    """The typed spec of a question file that passed `validate_question`."""
    return QuestionSpec.from_meta(cf.meta, scenario=cf.body)


def question_file(slug: str, root: Path) -> Path:
    """<root>/questions/<slug>.md; ContentError for a string that is not a slug (which also
    keeps the path inside the folder)."""
    if not SLUG_RE.match(slug or ""):
        raise ContentError(f"'{slug}' is not a question slug")
    return Path(root) / "questions" / f"{slug}.md"


def load_question_spec(slug: str, root: Path | None = None) -> QuestionSpec:
    """The shipped question `slug` (content/questions/<slug>.md, or under `root`).

    Raises ContentError with a one-line message for an unknown slug or a broken file.
    """
    path = question_file(slug, Path(root) if root else CONTENT_DIR)
    if not path.is_file():
        raise ContentError(f"no question '{slug}' (no {path})")
    spec, problems = load_question(path)
    if spec is None:
        raise ContentError(str(problems[0]))
    return spec
