"""Mermaid flowchart text -> `Diagram`: the subset candidates write, read in one pass.

Grammar (one statement per line, or several separated by `;`; `%%` starts a comment):

    diagram    := header statement*
    header     := ("flowchart" | "graph") [LR | RL | TD | TB | BT]      (TB when left out)
    statement  := chain | "subgraph" ID [title] | "subgraph" "\"title\"" | "end"
                | "direction" DIR | ("classDef" | "class" | "style" | "linkStyle" | "click") ...
    chain      := group (edge group)*
    group      := node ("&" node)*                      (an edge joins every pair)
    node       := ID [shape] [":::" CLASS]                (the class is read and ignored)
    shape      := "[" label "]" | "(" label ")" | "([" label "])" | "[(" label ")]"
                | "{" label "}" | "((" label "))" | "{{" label "}}" | "[[" label "]]"
    label      := text | "\"" text "\""                  (`<br>` reads as a space)
                                 (unquoted, it cannot hold its own opener: `a[x [y]]`)
    edge       := ("-->" | "---" | "-.->" | "-.-" | "==>" | "===") ["|" label "|"]
                | ("--o" | "--x" | "==o" | "==x") ["|" label "|"]    (read as "-->")
                | "--" text "-->" | "--" text "---" | "-." text ".->" | "==" text "==>"

An ID is letters, digits and `_`, with single inner `-` ("kv-offload"). Styling statements
(classDef, class, style, linkStyle, click) and a node's `:::class` only change how Mermaid
paints, so they are read and ignored: the layout here is Graphviz's. Control characters in a
label read as spaces; a byte order mark or zero-width space pasted in reads as a space. A
replica count written in a label ("vLLM x10", "vLLM ×10", "10x vLLM") becomes `Node.count`.

Hostile input is bounded by counting, not timing: the text is refused above
MAX_TEXT_CHARS before anything else is read, every scan moves forward through one line (no
regular expression runs over more than one label), and the node, edge, subgraph, depth and
label limits stop the parse at the first statement past them.
"""

from __future__ import annotations

import re

from diagrams.model import Diagram, DiagramError, Edge, Node, Subgraph

MAX_TEXT_CHARS = 20_000
MAX_NODES = 150
MAX_EDGES = 300
MAX_SUBGRAPHS = 50
MAX_SUBGRAPH_DEPTH = 6
MAX_LABEL_CHARS = 120

DIRECTIONS = {"LR": "LR", "RL": "RL", "TD": "TB", "TB": "TB", "BT": "BT"}
# Openers are tried longest first, so "([" is a stadium and not a round node labelled "[...".
SHAPES = (
    ("([", "])", "stadium"),
    ("[(", ")]", "cylinder"),
    ("((", "))", "circle"),
    ("[[", "]]", "subroutine"),
    ("{{", "}}", "hexagon"),
    ("[", "]", "box"),
    ("(", ")", "round"),
    ("{", "}", "diamond"),
)
STYLING_KEYWORDS = ("classDef", "class", "style", "linkStyle", "click")
RESERVED_IDS = ("end", "subgraph", "flowchart", "graph", "direction", *STYLING_KEYWORDS)

_BREAK_RE = re.compile(r"<br\s*/?>", re.IGNORECASE)
_WS_RE = re.compile(r"\s+")
# Control characters (Graphviz stops at a NUL; XML refuses the others) and lone surrogates
# (no UTF-8 for them) cannot reach the layout engine: a label shows a space or U+FFFD.
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")
# Spaces between tokens: a byte order mark and zero-width spaces come with pasted text.
SPACES = " \t\f\v\u00a0\ufeff\u200b\u2060"
# A replica count: "vLLM x10", "vLLM ×10", "vLLM (x 4)", "vLLM *3", or before the name, "10x vLLM".
_COUNT_AFTER_RE = re.compile(r"(?:^|[\s(\[,:])[x×*]\s?(\d{1,5})(?![\d.])", re.IGNORECASE)
_COUNT_BEFORE_RE = re.compile(r"(?:^|[\s(\[,:])(\d{1,5})\s?[x×](?=\s|$)", re.IGNORECASE)


def parse_diagram(text: str) -> Diagram:
    """Read Mermaid flowchart text (the subset in this module's docstring) into a `Diagram`.

    Raises DiagramError with the line and column (1-based) of the first syntax error, or of
    the first statement past a size limit (MAX_NODES, MAX_EDGES, MAX_SUBGRAPHS,
    MAX_SUBGRAPH_DEPTH, MAX_LABEL_CHARS); the message names the limit. Past MAX_TEXT_CHARS
    the error is of the whole text (`located` False).
    """
    if len(text) > MAX_TEXT_CHARS:
        raise DiagramError(
            f"the diagram is {len(text):,} characters long; the limit is {MAX_TEXT_CHARS:,}",
            located=False,
        )
    return _Parser(text).parse()


_FENCE_OPEN_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*mermaid[ \t]*$", re.IGNORECASE)


def split_mermaid_block(text: str) -> tuple[str, str]:
    """An answer written as Markdown, split into its prose and its diagram: the first fenced
    ```mermaid block (backticks or tildes, three or more) is the diagram, everything else the
    prose. Returns (prose, diagram text); the diagram is "" when there is no such block. A
    block left open runs to the end of the text, as in Markdown. Raises DiagramError (at the
    line of the second block's fence) when there are two, since only one can be graded."""
    lines = text.split("\n")
    prose: list[str] = []
    diagram: list[str] | None = None
    fence = ""
    inside = False
    for lineno, line in enumerate(lines, 1):
        if inside:
            stripped = line.strip()
            if (
                stripped.startswith(fence[0])
                and set(stripped) == {fence[0]}
                and len(stripped) >= len(fence)
            ):
                inside = False
            else:
                assert diagram is not None
                diagram.append(line)
            continue
        opened = _FENCE_OPEN_RE.match(line)
        if opened:
            if diagram is not None:
                raise DiagramError("only one ```mermaid block can be graded", lineno, 1)
            fence, inside, diagram = opened.group(1), True, []
            continue
        prose.append(line)
    return "\n".join(prose).strip("\n"), "\n".join(diagram or []).strip("\n")


def replica_count(label: str) -> int:
    """The replica count written in a label ("vLLM x10" -> 10), or 1 when none is written."""
    match = _COUNT_AFTER_RE.search(label) or _COUNT_BEFORE_RE.search(label)
    return int(match.group(1)) if match else 1


def clean_label(text: str) -> str:
    """A label as shown and graded: `<br>` line breaks, control characters and runs of
    whitespace become one space; a lone surrogate becomes U+FFFD."""
    text = _SURROGATE_RE.sub("\ufffd", _CONTROL_RE.sub(" ", _BREAK_RE.sub(" ", text)))
    return _WS_RE.sub(" ", text).strip()


def _is_id_char(char: str) -> bool:
    return char.isalnum() or char == "_"


class _Parser:
    def __init__(self, text: str) -> None:
        self.lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.direction: str | None = None
        self.nodes: dict[str, dict] = {}
        self.edges: list[Edge] = []
        self.subgraphs: dict[str, Subgraph] = {}
        self.open: list[tuple[str, int, int]] = []  # (subgraph id, line, column)
        self.lineno = 0
        self.s = ""
        self.pos = 0

    # --- errors and scanning ---------------------------------------------------------

    def error(self, message: str, pos: int | None = None) -> DiagramError:
        return DiagramError(message, self.lineno, (self.pos if pos is None else pos) + 1)

    def skip_space(self) -> None:
        s, pos = self.s, self.pos
        while pos < len(s) and s[pos] in SPACES:
            pos += 1
        self.pos = pos

    def at_statement_end(self) -> bool:
        return self.pos >= len(self.s) or self.s.startswith("%%", self.pos) or self.peek() == ";"

    def peek(self, offset: int = 0) -> str:
        at = self.pos + offset
        return self.s[at] if at < len(self.s) else ""

    def read_word(self) -> str:
        """An ID at the cursor (letters, digits, `_`, single inner `-`), or "" when none."""
        s, start = self.s, self.pos
        pos = start
        while pos < len(s):
            char = s[pos]
            if _is_id_char(char):
                pos += 1
            elif char == "-" and pos > start and pos + 1 < len(s) and _is_id_char(s[pos + 1]):
                pos += 1
            else:
                break
        self.pos = pos
        return s[start:pos]

    def keyword(self) -> str:
        """The keyword at the cursor (followed by a space, `;` or the line's end), not consumed."""
        s, pos = self.s, self.pos
        end = pos
        while end < len(s) and s[end].isalpha():
            end += 1
        word = s[pos:end]
        if end == len(s) or s[end] in " \t;":
            return word
        return ""

    def rest_of_statement(self) -> str:
        s, start = self.s, self.pos
        end = len(s)
        for stop in (";", "%%"):
            at = s.find(stop, start)
            if at >= 0:
                end = min(end, at)
        self.pos = end
        return s[start:end]

    # --- the diagram -------------------------------------------------------------------

    def parse(self) -> Diagram:
        for lineno, line in enumerate(self.lines, 1):
            self.lineno, self.s, self.pos = lineno, line, 0
            while True:
                self.skip_space()
                if self.pos >= len(self.s) or self.s.startswith("%%", self.pos):
                    break
                if self.peek() == ";":
                    self.pos += 1
                    continue
                self.statement()
                self.skip_space()
                if self.peek() == ";":
                    self.pos += 1
                elif not (self.pos >= len(self.s) or self.s.startswith("%%", self.pos)):
                    raise self.error(
                        f"unexpected {self.s[self.pos]!r}: expected an edge such as '-->' "
                        "or the end of the line"
                    )
        if self.direction is None:
            self.lineno = 1
            raise self.error("the diagram is empty: start it with a line such as 'flowchart LR'", 0)
        if self.open:
            name, line, column = self.open[-1]
            raise DiagramError(f"subgraph '{name}' is not closed: add a line 'end'", line, column)
        return Diagram(
            direction=self.direction,
            nodes=tuple(
                Node(
                    id=node_id,
                    label=node["label"],
                    count=replica_count(node["label"]),
                    subgraph=node["subgraph"],
                    shape=node["shape"],
                )
                for node_id, node in self.nodes.items()
            ),
            edges=tuple(self.edges),
            subgraphs=tuple(self.subgraphs.values()),
        )

    def statement(self) -> None:
        if self.direction is None:
            self.header()
            return
        keyword = self.keyword()
        if keyword == "subgraph":
            self.subgraph()
        elif keyword == "end":
            if not self.open:
                raise self.error("'end' without an open subgraph")
            self.open.pop()
            self.pos += 3
        elif keyword == "direction":
            self.pos += len(keyword)
            self.skip_space()
            self.read_direction(required=True)
        elif keyword in STYLING_KEYWORDS:
            self.rest_of_statement()
        else:
            self.chain()

    def header(self) -> None:
        start = self.pos
        word = self.read_word()
        if word not in ("flowchart", "graph"):
            raise self.error(
                "a diagram starts with 'flowchart LR' (or TD, RL, BT); only flowcharts are read",
                start,
            )
        self.skip_space()
        self.direction = self.read_direction(required=False) or "TB"

    def read_direction(self, *, required: bool) -> str:
        start = self.pos
        word = self.read_word()
        if not word and not required and self.at_statement_end():
            return ""
        if word.upper() not in DIRECTIONS:
            raise self.error(f"unknown direction {word!r}: use LR, RL, TD, TB or BT", start)
        return DIRECTIONS[word.upper()]

    def subgraph(self) -> None:
        keyword_at = self.pos
        self.pos += len("subgraph")
        self.skip_space()
        if len(self.subgraphs) >= MAX_SUBGRAPHS:
            raise self.error(f"more than {MAX_SUBGRAPHS} subgraphs (the limit)", keyword_at)
        if len(self.open) >= MAX_SUBGRAPH_DEPTH:
            raise self.error(
                f"subgraphs nest more than {MAX_SUBGRAPH_DEPTH} deep (the limit)", keyword_at
            )
        start = self.pos
        if self.peek() == '"':
            title = self.quoted()
            subgraph_id = f"subgraph-{len(self.subgraphs) + 1}"
        else:
            subgraph_id = self.read_word()
            if not subgraph_id:
                raise self.error("a subgraph needs a name: 'subgraph pool [GPU pool]'", start)
            self.skip_space()
            if self.peek() == "[":
                title = self.shape_label("[", "]")
            elif self.at_statement_end():
                title = subgraph_id
            else:
                title = clean_label(subgraph_id + " " + self.rest_of_statement())
        self.check_label(title, start)
        if subgraph_id in self.subgraphs or subgraph_id in self.nodes:
            raise self.error(f"the name '{subgraph_id}' is already used", start)
        parent = self.open[-1][0] if self.open else ""
        self.subgraphs[subgraph_id] = Subgraph(id=subgraph_id, title=title, parent=parent)
        self.open.append((subgraph_id, self.lineno, start + 1))

    # --- nodes and edges -------------------------------------------------------------------

    def chain(self) -> None:
        sources = self.node_group()
        while True:
            self.skip_space()
            if self.at_statement_end():
                return
            edge_at = self.pos
            label, directed, style = self.edge()
            self.skip_space()
            targets = self.node_group()
            for source in sources:
                for target in targets:
                    if len(self.edges) >= MAX_EDGES:
                        raise self.error(f"more than {MAX_EDGES} edges (the limit)", edge_at)
                    self.edges.append(Edge(source, target, label, directed=directed, style=style))
            sources = targets

    def node_group(self) -> list[str]:
        """`a & b & c`: nodes an edge joins all at once (every source to every target)."""
        group = [self.node()]
        while True:
            self.skip_space()
            if self.peek() != "&":
                return group
            self.pos += 1
            self.skip_space()
            group.append(self.node())

    def node(self) -> str:
        start = self.pos
        node_id = self.read_word()
        if not node_id:
            found = repr(self.peek()) if self.peek() else "the end of the line"
            raise self.error(f"expected a node id (letters, digits, _) but found {found}", start)
        if node_id in RESERVED_IDS:
            raise self.error(f"'{node_id}' is a keyword and cannot name a node", start)
        if len(node_id) > MAX_LABEL_CHARS:
            raise self.error(
                f"the id is {len(node_id):,} characters long; the limit is {MAX_LABEL_CHARS}",
                start,
            )
        if node_id in self.subgraphs:
            raise self.error(f"'{node_id}' is a subgraph: connect a node inside it instead", start)
        label, shape = None, None
        self.skip_space()
        for opener, closer, shape_name in SHAPES:
            if self.s.startswith(opener, self.pos):
                label_at = self.pos
                label = self.shape_label(opener, closer, last=len(opener) == 1)
                if label is None:  # no closer of the longer form on this line: try a shorter
                    self.pos = label_at
                    continue
                shape = shape_name
                self.check_label(label, label_at)
                break
        if self.s.startswith(":::", self.pos):  # a class to paint with: read and ignored
            class_at = self.pos
            self.pos += 3
            if not self.read_word():
                raise self.error("':::' needs a class name after it: 'a:::hot'", class_at)
        current = self.open[-1][0] if self.open else ""
        node = self.nodes.get(node_id)
        if node is None:
            if len(self.nodes) >= MAX_NODES:
                raise self.error(f"more than {MAX_NODES} nodes (the limit)", start)
            self.nodes[node_id] = {
                "label": label or node_id,
                "shape": shape or "box",
                "subgraph": current,
            }
        else:
            if label is not None:
                node["label"], node["shape"] = label, shape
            if not node["subgraph"]:
                node["subgraph"] = current
        return node_id

    def shape_label(self, opener: str, closer: str, *, last: bool = True) -> str | None:
        """The label between opener and closer; None when the closer is missing and a shorter
        opener may still fit (`last` False), an error when it is the last try."""
        label_at = self.pos
        self.pos += len(opener)
        self.skip_space()
        if self.peek() == '"':
            label = self.quoted()
            self.skip_space()
            if not self.s.startswith(closer, self.pos):
                raise self.error(f"expected {closer!r} after the quoted label")
        else:
            end = self.s.find(closer, self.pos)
            if end < 0:
                if not last:
                    return None
                raise self.error(f"{opener!r} is not closed: add {closer!r}", label_at)
            text = self.s[self.pos : end]
            if opener in text:
                # `gw[API gateway --> router[Router]`: the closer found is the next node's;
                # read as one label, the edge and the next node would vanish into it.
                raise self.error(
                    f"{opener!r} is not closed before the next {opener!r}: add {closer!r} "
                    f'(a label that holds brackets is quoted: a["..."])',
                    label_at,
                )
            label = clean_label(text)
            self.pos = end
        self.pos += len(closer)
        if not label:
            raise self.error("empty label: write text between the brackets", label_at)
        return label

    def quoted(self) -> str:
        start = self.pos
        end = self.s.find('"', start + 1)
        if end < 0:
            raise self.error("the quoted label is not closed: add '\"'", start)
        self.pos = end + 1
        return clean_label(self.s[start + 1 : end])

    def check_label(self, label: str, at: int) -> None:
        if len(label) > MAX_LABEL_CHARS:
            raise self.error(
                f"the label is {len(label):,} characters long; the limit is {MAX_LABEL_CHARS}",
                at,
            )

    def edge(self) -> tuple[str, bool, str]:
        """The edge at the cursor: (label, directed, style)."""
        start, s = self.pos, self.s
        char = self.peek()
        if char == "<":
            raise self.error("two-headed edges ('<-->') are not read: draw two edges", start)
        if char == "-" and self.peek(1) == ".":
            label, directed = self.dotted_edge()
            style = "dotted"
        elif char in "-=":
            run = self.pos
            while run < len(s) and s[run] == char:
                run += 1
            dashes = run - self.pos
            style = "solid" if char == "-" else "thick"
            if dashes >= 2 and run < len(s) and s[run] == ">":
                self.pos, label, directed = run + 1, "", True
            elif dashes >= 2 and s[run : run + 1] in ("o", "x") and self.edge_end_at(run + 1):
                # Mermaid's circle and cross ends (`--o`, `--x`): an edge all the same.
                self.pos, label, directed = run + 1, "", True
            elif dashes >= 3:
                self.pos, label, directed = run, "", False
            elif dashes == 2:
                self.pos = run
                label, directed = self.inline_label(char)
            else:
                raise self.error(f"expected an edge such as '-->' after {char!r}", start)
        else:
            raise self.error(
                f"unexpected {char!r}: expected an edge such as '-->' or the end of the line",
                start,
            )
        self.skip_space()
        if self.peek() == "|":
            pipe_at = self.pos
            end = s.find("|", self.pos + 1)
            if end < 0:
                raise self.error("an edge label opened with '|' is not closed: add '|'", pipe_at)
            text = s[self.pos + 1 : end].strip()
            if len(text) >= 2 and text[0] == text[-1] == '"':
                text = text[1:-1]
            label = clean_label(text)
            self.check_label(label, pipe_at)
            self.pos = end + 1
        return label, directed, style

    def edge_end_at(self, pos: int) -> bool:
        """Whether an edge's arrow may end before `pos`: a space, a `|` label or the line's end
        follow (`--o b`, not the label of `--oauth-->`)."""
        return pos >= len(self.s) or self.s[pos] in SPACES or self.s[pos] == "|"

    def inline_label(self, char: str) -> tuple[str, bool]:
        """`-- text -->` / `-- text ---` (or `==`): the text up to the closing arrow."""
        s, start = self.s, self.pos
        search = start
        while True:
            at = s.find(char * 2, search)
            if at < 0:
                raise self.error(
                    f"an edge label after '{char * 2}' must end with '{char * 2}>' or '{char * 3}'",
                    start - 2,
                )
            run = at
            while run < len(s) and s[run] == char:
                run += 1
            if run < len(s) and s[run] == ">":
                directed, self.pos = True, run + 1
                break
            if run - at >= 3:
                directed, self.pos = False, run
                break
            search = run
        label = clean_label(s[start:at])
        if len(label) >= 2 and label[0] == label[-1] == '"':
            label = label[1:-1].strip()
        self.check_label(label, start)
        return label, directed

    def dotted_edge(self) -> tuple[str, bool]:
        """`-.->`, `-.-`, `-. text .->` (any number of dots)."""
        s, start = self.s, self.pos
        run = start + 1
        while run < len(s) and s[run] == ".":
            run += 1
        if s.startswith("->", run):
            self.pos = run + 2
            return "", True
        if run < len(s) and s[run] == "-":
            self.pos = run + 1
            return "", False
        at = s.find(".-", run)
        if at < 0:
            raise self.error("a dotted edge label after '-.' must end with '.->'", start)
        label = clean_label(s[run:at])
        self.check_label(label, run)
        if s.startswith(".->", at):
            self.pos = at + 3
            return label, True
        self.pos = at + 2
        return label, False
