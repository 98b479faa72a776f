"""Reading a candidate's answer: sentences, normalised words, phrases, negation, bare lists.

Both graders read answers through this module, so "the sentence that earned a point", "a bare
list of buzzwords" and "a quote found verbatim in the answer" mean the same thing whichever
grader produced the verdict.

Normalisation (see content/README.md): case is folded, Unicode is NFKC-normalised, hyphens and
underscores join words that are also matched as one word ("prefix-aware" matches "prefix aware"
and "prefixaware"), plurals are folded ("replicas" -> "replica", "queries" -> "query"), and each
word of a phrase matches at the start of a word ("rout" matches "router" and "routing").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

# --- characters -----------------------------------------------------------------------------

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
# Word joiners: a hyphen or underscore with no space around it makes one compound word.
_JOINERS = {"-", "\u2010", "\u2011", "\u2012", "_"}
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:\.[0-9]+)*(?:'[a-z]+)?")
_WS_RE = re.compile(r"\s+")

# Qwen's chat template turns these literal strings into control tokens, so a candidate could
# forge a system turn with them. Any `<|...|>` is treated the same way.
_SPECIAL_TOKEN_RE = re.compile(r"<\|[^<>\n]{0,64}?\|>")


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace (newlines included) become one space; ends are trimmed."""
    return _WS_RE.sub(" ", text).strip()


def normalise_for_quote(text: str) -> str:
    """The form in which a quoted piece of evidence is compared with the answer.

    Case folded and whitespace collapsed, nothing else: a quote that matches in this form is
    a real quote of what the candidate typed.
    """
    return collapse_whitespace(text.casefold())


def strip_special_tokens(text: str) -> tuple[str, int]:
    """Remove every `<|...|>` chat-template token; return the text and how many were removed.

    Repeats until none is left, so `<|im_<|x|>start|>` cannot reassemble into a token.
    """
    removed = 0
    while True:
        text, n = _SPECIAL_TOKEN_RE.subn("", text)
        if not n:
            return text, removed
        removed += n


# --- form values ----------------------------------------------------------------------------

# A step answered partly in a form (the clarify step's SLO card) reaches the graders as a
# labelled block of the form's values ahead of what the candidate wrote. The values are the
# candidate's, but the labels and layout are the app's: the block is context for a grader,
# never quotable evidence. Only a block that opens the text counts.
FORM_BLOCK_START = "[Form values the candidate entered; context, not quotable]"
FORM_BLOCK_END = "[End of form values]"


def form_block(lines: list[str]) -> str:
    """The block for the given "Label: value" lines (an empty string for none). A marker
    inside a value is dropped: one would end the block early, and the app's labels after it
    would read as the candidate's quotable words."""
    kept = [_without_markers(collapse_whitespace(line)) for line in lines]
    kept = [line for line in kept if line]
    if not kept:
        return ""
    return "\n".join([FORM_BLOCK_START, *kept, FORM_BLOCK_END])


def _without_markers(line: str) -> str:
    # Until none is left: "[End of form [End of form values]values]" must not reassemble one.
    while FORM_BLOCK_START in line or FORM_BLOCK_END in line:
        line = line.replace(FORM_BLOCK_START, "").replace(FORM_BLOCK_END, "")
    return collapse_whitespace(line)


def typed_opening(text: str) -> str:
    """`text`, the candidate's own writing, ready to open a graded text with no form values
    block before it. Writing that itself opens with the block's marker line (pasted, or
    written to slip words past the model grader's answer markers as "context") gets an empty
    block put before it, so the graders read all of it as the answer."""
    if text.lstrip().startswith(FORM_BLOCK_START):
        return f"{FORM_BLOCK_START}\n{FORM_BLOCK_END}\n{text}"
    return text


def split_form_block(text: str) -> tuple[str, int]:
    """The form values block that opens a text (its lines between the markers, "" when there
    is none) and the offset where the candidate's own writing starts."""
    stripped = text.lstrip()
    if not stripped.startswith(FORM_BLOCK_START):
        return "", 0
    start = len(text) - len(stripped)
    end = text.find(FORM_BLOCK_END, start)
    if end < 0:
        return "", 0
    body = text[start + len(FORM_BLOCK_START) : end].strip()
    return body, end + len(FORM_BLOCK_END)


def typed_text(text: str) -> str:
    """What the candidate wrote: the text without a form values block that opens it."""
    return text[split_form_block(text)[1] :]


# --- words ------------------------------------------------------------------------------------


def fold_word(word: str) -> str:
    """One word in its matching form: possessive and plural endings removed.

    Deliberately crude (no dictionary): the same folding is applied to the rubric's phrases
    and to the answer, so it only has to be consistent, not linguistically right.
    """
    if word.endswith("'s"):
        word = word[:-2]
    elif word.endswith("'"):
        word = word[:-1]
    if len(word) > 3 and not word[-1].isdigit() and "'" not in word:
        if word.endswith("ies"):
            return word[:-3] + "y"
        if word.endswith("sses"):
            return word[:-2]
        # "gpus", "cpus": plural acronyms; other "-us" words ("status", "corpus") keep theirs.
        if word.endswith("pus") or (word.endswith("s") and not word.endswith(("ss", "us", "is"))):
            return word[:-1]
    return word


def _prepare(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).casefold()


@dataclass(frozen=True)
class Phrase:
    """A rubric phrase in matching form: folded words, and the same words run together.

    `possessive[k]`: the phrase writes word k as a possessive ("another's"), which folding
    would make the bare word; it then matches only a possessive in the answer.
    """

    text: str
    words: tuple[str, ...]
    joined: str
    possessive: tuple[bool, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Phrase:
        return _parse_phrase(text)


@lru_cache(maxsize=4096)
def _parse_phrase(text: str) -> Phrase:
    raw = _TOKEN_RE.findall(_prepare(text))
    words = tuple(fold_word(w) for w in raw)
    possessive = tuple(w.endswith("'s") for w in raw)
    return Phrase(text=text, words=words, joined="".join(words), possessive=possessive)


# The matcher's own vocabulary: a rubric phrase (the key) also matches these ways engineers
# commonly say the same thing. Generic to LLM serving, never one answer's wording, and kept
# small: every entry is a way to point at a sentence, and a wrong one points wrongly.
_EQUIVALENTS: dict[str, tuple[str, ...]] = {
    # A build that "goes out" or "ships" is deployed; a canary is a staged rollout.
    "deploy": ("build goes out", "build go out", "build went out", "ship a build", "canary"),
    "rollout": ("build goes out", "build go out", "canary"),
    # Loading weights is what a cold start spends its time on.
    "cold start": ("load weight", "loading weight", "weight loading"),
    "model load": ("load weight", "loading weight", "weight loading"),
    # A lag measured in minutes is as long as one measured in seconds.
    "second": ("minute",),
    # Customers and users are the tenants of a multi-tenant service.
    "another tenant": ("another customer", "another user", "another's", "other customer"),
    "other tenant": ("other customer", "other user", "other's"),
    "cross tenant": ("cross customer",),
}


def phrase_variants(text: str) -> tuple[str, ...]:
    """A rubric phrase and the generic equivalents the matcher also accepts for it."""
    key = " ".join(_TOKEN_RE.findall(_prepare(text)))
    return (text, *_EQUIVALENTS.get(key, ()))


# --- figures ----------------------------------------------------------------------------------

# A figure with a unit, by kind, in one base unit per kind (seconds, requests per second,
# gigabytes): "5000 ms", "2 s", "two seconds", "50 QPS", "24 GB".
_UNITS: dict[str, tuple[str, float]] = {
    "ms": ("time", 1e-3), "millisecond": ("time", 1e-3), "milliseconds": ("time", 1e-3),
    "s": ("time", 1.0), "sec": ("time", 1.0), "secs": ("time", 1.0),
    "second": ("time", 1.0), "seconds": ("time", 1.0),
    "min": ("time", 60.0), "mins": ("time", 60.0), "minute": ("time", 60.0),
    "minutes": ("time", 60.0),
    "qps": ("rate", 1.0), "rps": ("rate", 1.0), "req/s": ("rate", 1.0),
    "mb": ("memory", 1e-3), "gb": ("memory", 1.0), "gib": ("memory", 1.073741824),
    "tb": ("memory", 1e3),
}  # fmt: skip
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "twenty": 20, "thirty": 30, "fifty": 50, "hundred": 100,
}  # fmt: skip
_UNIT_ALTERNATIVES = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
# A figure in digits ("5000 ms", "2s", "32k QPS") or a number word before a unit word written
# out ("two seconds"; not "ones" or "hundreds").
_FIGURE_RE = re.compile(
    r"(?<![\w.])(?:(\d+(?:[.,]\d+)*)\s*(k\b)?\s*(" + _UNIT_ALTERNATIVES + r")"
    r"|\b(" + "|".join(_NUMBER_WORDS) + r")\s+(" + _UNIT_ALTERNATIVES + r"))(?![\w/])",
    re.IGNORECASE,
)
# Two figures of one kind within this share of each other are the same figure.
SAME_FIGURE = 0.10


@dataclass(frozen=True)
class Figure:
    """A figure with a unit found in a text: its kind ("time", "rate", "memory"), its value in
    the kind's base unit and the words as written."""

    kind: str
    value: float
    written: str


def figures(text: str) -> list[Figure]:
    """Every figure with a unit in a text ("p99 TTFT 5000 ms" gives time 5.0 s)."""
    found = []
    prepared = _prepare(text)
    for match in _FIGURE_RE.finditer(prepared):
        digits, thousands, digit_unit, word, word_unit = match.groups()
        unit = digit_unit or word_unit
        if word is not None:
            if len(unit) <= 2:  # "two s", "ten ms": not how a figure is written out
                continue
            value = float(_NUMBER_WORDS[word])
        else:
            try:
                value = float(digits.replace(",", ""))
            except ValueError:
                continue
        attached_s = unit == "s" and not match.group(0)[len(digits or "") :].startswith(" ")
        if attached_s and (value >= 1000 or prepared.startswith(" of ", match.end())):
            continue  # "4090s" are cards and "100s of tenants" a count, not seconds
        kind, scale = _UNITS[unit]
        value *= scale * (1e3 if thousands else 1.0)
        found.append(Figure(kind, value, match.group(0).strip()))
    return found


def contradicting_figure(text: str, expected: list[Figure]) -> Figure | None:
    """A figure of the text that contradicts the expected ones: of a kind they have, and the
    same as none of them (within SAME_FIGURE). None when the text agrees or says no figure
    of that kind; a text naming the expected figure among others does not contradict."""
    kinds = {f.kind for f in expected}
    written = [f for f in figures(text) if f.kind in kinds]
    for kind in sorted({f.kind for f in written}):
        theirs = [f for f in written if f.kind == kind]
        wanted = [f.value for f in expected if f.kind == kind]
        if not any(abs(t.value - w) <= SAME_FIGURE * w for t in theirs for w in wanted):
            return theirs[0]
    return None


# --- negation ---------------------------------------------------------------------------------

_NEGATORS = {"not", "no", "never", "without", "nor", "neither", "cannot", "none"}
# Words that may sit between a negator and the idea it negates ("we do not need a router").
_NEGATION_GAP = {
    "a", "an", "the", "any", "some", "our", "its", "their", "this", "that", "to", "be", "been",
    "do", "have", "has", "use", "using", "used", "need", "needed", "for", "with", "in", "really",
    "actually", "bother", "require", "want", "worry", "about", "even", "also", "enable", "turn",
    "on", "add", "adding", "rely", "relying", "separate", "we", "i", "you", "it", "they",
    "expect", "think", "see", "believe", "plan", "consider", "recommend", "care", "point",
    "reason", "much", "more", "go", "going", "run", "keep",
}  # fmt: skip
# "not only X but Y", "not just X", "isn't optional": the negator does not deny the idea.
_NEGATION_NEUTRALISERS = {
    "only", "just", "merely", "necessarily", "optional", "enough", "sufficient", "negotiable",
}  # fmt: skip
# Negation inside a condition describes a failure mode, it does not reject the idea:
# "if the router is not prefix-aware, every replica re-prefills the corpus".
_CONDITIONALS = {"if", "unless", "when", "whenever", "once", "until", "otherwise", "should"}
_AUXILIARIES = {
    "is", "are", "was", "were", "be", "do", "does", "did", "will", "would", "should", "could",
    "can", "must", "may", "might", "has", "have", "had",
}  # fmt: skip
# A denial after one of these is a rule ("must never", "may not"), not a rejection.
_PROHIBITING_MODALS = {"must", "may", "should", "shall"}
_PROHIBITING_CONTRACTIONS = {"mustn't", "shouldn't", "shan't"}
_CLAUSE_WORDS = {
    "but", "because", "so", "while", "whereas", "although", "though", "which", "since",
    "however", "yet", "then", "otherwise", "instead",
}  # fmt: skip
_CLAUSE_PUNCT_RE = re.compile(r"[;:()\[\]\u2014\u2013]|(?<!\d),|,(?!\d)|\s-\s|\.\s|->|=>|\u2192")


# First words that tie a sentence to the one before it.
_CONTINUATIONS = {
    "this", "that", "it", "these", "those", "because", "so", "since", "thus", "hence",
    "therefore", "then", "otherwise", "which", "that's", "it's", "this'll", "that'll",
}  # fmt: skip
# Verbs (folded) that compare two things: "A beats B" and "B can't beat A" say the same.
# Not "top" or "win": as nouns ("the top adapters") they would put what follows below.
_COMPARATIVES = {
    "beat", "outperform", "outrun", "outpace", "outscale", "outdo", "exceed", "surpass",
    "match", "rival",
}  # fmt: skip
# Comparatives of parity: "A can't match B" puts A below B, but "capacity should match the
# daytime rate" puts nothing below anything.
_PARITY = {"match", "rival"}
# An engine flag as typed: "--max-model-len", "--enable-prefix-caching".
_FLAG_RE = re.compile(r"(?<![\w-])--[a-z0-9][a-z0-9-]*", re.IGNORECASE)


# A flag with the value typed after it ("--max-model-len 8192", "--kv-cache-dtype=fp8").
_FLAG_WITH_VALUE_RE = re.compile(
    r"(?<![\w-])--[a-z0-9][a-z0-9-]*(?:[ =](?!--)[^\s,;]+)?", re.IGNORECASE
)


def is_configuration(text: str) -> bool:
    """Whether a text is a configuration: engine flags (with their values), behind at most a
    short label, with at most one other setting named bare, and any other words saying why
    ("Engine flags: AWQ, --max-model-len 8192 and --enable-prefix-caching so the shared
    prompt is prefilled once"). A run of buzzwords with flags among them ("Bottlenecks:
    thrash, --max-loras, eviction, noisy neighbour") is not."""
    if not _FLAG_RE.search(text):
        return False
    items = _list_items(text)
    label, colon, _ = text.partition(":")
    if items and colon and not _FLAG_RE.search(label) and len(_TOKEN_RE.findall(label)) <= 3:
        items = items[1:]
        text = text[len(label) + 1 :]
    named_bare = [i for i in items if not _FLAG_RE.search(i) and _item_is_bare(i)]
    if len(named_bare) > 1:
        return False
    rest = _TOKEN_RE.findall(_prepare(_FLAG_WITH_VALUE_RE.sub(" ", text)))
    return len(rest) < 8 or _function_share(rest) >= SALAD_FUNCTION_SHARE


def names_engine_flag(text: str) -> bool:
    """Whether a text names an engine flag ("--max-model-len"), as a point asking for the
    configuration does."""
    return _FLAG_RE.search(text) is not None


def _is_comparative(word: str) -> bool:
    # Folding leaves "matches" as "matche"; the comparatives are matched before that ending.
    return word in _COMPARATIVES or (word.endswith("e") and word[:-1] in _COMPARATIVES)


def is_negator(word: str) -> bool:
    """Whether a word (as written, lower case) denies: "not", "never", "no", any n't-word."""
    return word in _NEGATORS or word.endswith("n't") or word in {"dont", "doesnt", "wont", "cant"}


_is_negator = is_negator


# --- lists and stuffing -------------------------------------------------------------------------

# Words that show an item says something (a subject, a verb, a reason) rather than naming a thing.
_CLAIM_WORDS = {
    "we", "i", "you", "it", "they", "this", "that", "which", "who", "is", "are", "was", "were",
    "be", "being", "been", "will", "would", "should", "could", "can", "must", "may", "might",
    "do", "does", "did", "has", "have", "had", "because", "so", "since", "then", "than", "when",
    "if", "unless", "by", "via", "into", "until", "before", "after", "while", "let", "lets",
    "means", "gives", "keeps", "makes", "avoids", "needs", "need", "but", "however", "although",
    "though", "whereas", "otherwise", "therefore", "thus", "hence",
}  # fmt: skip
_STOPWORDS = _CLAIM_WORDS | {
    "a", "an", "the", "of", "to", "in", "on", "for", "with", "and", "or", "at", "from", "as",
    "per", "each", "every", "not", "no", "its", "their", "our", "more", "less", "one", "all",
}  # fmt: skip
# Below this share of function words, eight or more words are a keyword salad.
SALAD_FUNCTION_SHARE = 0.12
_LIST_SPLIT_RE = re.compile(r"(?<!\d),|,(?!\d)|[;:|\u2022\u00b7]|\s[&+]\s")
# A list joins its last item with "and" or "or"; inside an item, "and" joins a clause ("replicas
# load and evict adapters continuously"), so only the last "and" of the last item splits.
_LAST_AND_RE = re.compile(r"\s(?:and|or)\s(?!.*\s(?:and|or)\s)")


def _list_items(text: str) -> list[str]:
    """The items of a text read as a list: parts between commas, semicolons, colons and
    bullets, the last one cut at its last "and"/"or"."""
    items = [i for i in _LIST_SPLIT_RE.split(text) if i and i.strip()]
    if items:
        items[-1:] = [i for i in _LAST_AND_RE.split(items[-1], maxsplit=1) if i.strip()]
    return items


_RELATION_RE = re.compile(r"->|=>|\u2192|=|<|>")
_BULLET_RE = re.compile(r"^\s*(?:[-*\u2022\u00b7>]|\d{1,2}[.)]|#{1,6})\s+")

# --- injection cues -----------------------------------------------------------------------------

# Text addressed to the grader rather than the interviewer. A sentence matching one of these
# earns nothing and the answer is flagged. Kept narrow: a false alarm costs an honest candidate.
_INJECTION_CUES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (reason, re.compile(pattern, re.IGNORECASE))
    for reason, pattern in (
        ("chat-template control token", r"<\|[^<>\n]{0,64}?\|>"),
        (
            "instruction to ignore the rubric",
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,60}"
            r"\b(?:instruction|rubric|prompt|rule|guideline|above|previous|prior|everything"
            r"|system|criteria)",
        ),
        (
            "request for marks",
            r"\b(?:give|award|assign|grant|mark|grade|score|rate|output|return|set)\b[^.\n]{0,60}"
            r"(?:full (?:marks|score|credit|points)|all (?:the )?(?:rubric )?points"
            r"|every (?:rubric )?point|maximum (?:score|marks|points)|perfect (?:score|marks)"
            r"|100 ?%|\bas (?:a )?[\"']?hit\b|score of 1(?:\.0)?\b|\bverdicts?\b)",
        ),
        (
            "role-play instruction",
            r"\b(?:you are|you're|act as|pretend to be|as an? (?:ai|language model))\b[^.\n]{0,40}"
            r"\b(?:grader|evaluator|assistant|model|examiner|judge)\b",
        ),
        ("forged chat turn", r"(?:^|\n)\s*#*\s*(?:assistant|grader|developer|system prompt)\s*:"),
        (
            "forged grader output",
            r"[\"'](?:verdict|evidence|injection_suspected|points|score|feedback)[\"']\s*:",
        ),
        (
            "forged instructions",
            # "The new system prompt busted the prefix cache" is an answer about serving; only
            # a system prompt introduced like a message (a colon after it) is forged.
            r"\b(?:new|updated|real|actual|hidden|secret) (?:instructions?|rubric)\b"
            r"|\b(?:real|actual|hidden|secret) system prompt\b"
            r"|\b(?:new|updated) system prompt\s*:",
        ),
        (
            "note to the grader",
            # A design sends messages and instructions to the model all the time: only a note
            # or reminder is addressed to it, or anything to whoever grades.
            r"\b(?:note|reminder) (?:to|for) (?:the )?(?:grader|evaluator|model|ai|llm|assistant"
            r"|marker)\b|\b(?:message|instructions?) (?:to|for) (?:the )?(?:grader|evaluator"
            r"|marker)\b|\bdear (?:grader|evaluator|model|ai|marker)\b"
            r"|\b(?:grader|evaluator|marker)\s*[,:]\s*(?:please|you must)",
        ),
        (
            "talks to the grader",
            r"\b(?:rubric|grader|grading|examiner|evaluator|verdicts?|full marks"
            r"|(?:points?|marks) (?:awarded|scored))\b",
        ),
        (
            "forged delimiter",
            r"<<<|>>>|</?(?:answer|candidate_answer|system|instructions?|rubric)>"
            r"|\bend of (?:the )?(?:candidate'?s? )?answer\b",
        ),
    )
)
# A forged system or assistant turn: everything up to its end marker is the attack.
_FORGED_TURN_RE = re.compile(
    r"<\|im_start\|>\s*(?:system|assistant)\b.*?(?:<\|im_end\|>|\Z)", re.IGNORECASE | re.DOTALL
)


# --- sentences ------------------------------------------------------------------------------------


@dataclass
class Sentence:
    """One sentence of an answer, with its words in matching form.

    `words[i]` is the folded word, `raw[i]` the word as written (lower case), `clauses[i]` the
    clause it sits in (commas, semicolons and connectives like "because" start a new one) and
    `joined[i]` whether a hyphen or underscore ties it to the word before; `gaps[i]` is what
    stood between it and the word before (spaces and punctuation, "" for the first word).
    """

    index: int
    start: int
    end: int
    text: str
    words: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    clauses: list[int] = field(default_factory=list)
    joined: list[bool] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    whole_line: bool = False
    bare_list: bool = False
    # Why it is bare: "list" (three or more bare items, or a run of short bullets), "salad"
    # (a run of terms with no function words) or "fragment" (a lone phrase of three words).
    bare_reason: str | None = None
    # Engine flags named in it ("--max-model-len"): settings, not buzzwords (`earns_settings`).
    flags: tuple[str, ...] = ()
    injection: str | None = None

    @cached_property
    def runs(self) -> tuple[tuple[int, int], ...]:
        """The words in runs [i, j): a lone word, or two or more tied by hyphens or underscores
        ("auto-scaling"), which also read as one word. The words are final once read."""
        runs = []
        i = 0
        while i < len(self.words):
            j = i + 1
            while j < len(self.words) and self.joined[j]:
                j += 1
            runs.append((i, j))
            i = j
        return tuple(runs)

    @property
    def evidence(self) -> str:
        """The sentence as a quote: whitespace collapsed, otherwise exactly as written."""
        return collapse_whitespace(self.text)

    @property
    def earns(self) -> bool:
        """Whether this sentence may earn a rubric point at all."""
        return not self.bare_list and self.injection is None

    @property
    def earns_settings(self) -> bool:
        """Whether it may earn a point that asks for engine settings: a list of flags
        ("--enable-prefix-caching, --max-model-len 8192") is the configuration asked for, not
        keyword stuffing. Only points whose own wording names a flag accept it, so invented
        flags cannot stuff the rest of the rubric, and only a sentence of flags alone
        (`is_configuration`): buzzwords with a flag among them are still a list."""
        return self.earns or (
            bool(self.flags) and self.injection is None and is_configuration(self.text)
        )

    @property
    def continues_previous(self) -> bool:
        """Whether it opens by pointing back at the sentence before ("This keeps...", "Because
        ...", "So ..."): the two then state one thought and may earn a point together."""
        return bool(self.raw) and self.raw[0] in _CONTINUATIONS


@dataclass(frozen=True)
class Occurrence:
    """Where a phrase was found in a sentence: word positions [start, end) and its polarity."""

    start: int
    end: int
    negated: bool
    # The losing side of a comparison: the subject of a denied comparative verb ("one giant
    # instance can't beat ten cards") or the object of an affirmed one ("replicas beat one big
    # TP instance"). A denied comparison is a claim about the phrase, not a refusal of it.
    lesser: bool = False
    # The denial is a rule ("one tenant must never reach another tenant's adapter"), which
    # states a requirement where the point is one.
    prohibited: bool = False


@dataclass
class AnswerReading:
    """An answer split into sentences, with the injection cues found in it."""

    text: str
    sentences: list[Sentence]
    injection_reasons: list[str]

    @property
    def injection_suspected(self) -> bool:
        return bool(self.injection_reasons)


def _block_bounds(text: str) -> list[tuple[int, int]]:
    """Paragraphs and bullets of the text as (start, end) offsets.

    A line break inside a hard-wrapped sentence is not a boundary (the previous line has no
    closing punctuation and the next one starts in lower case); blank lines, bullets and
    headings are.
    """
    physical = []
    offset = 0
    for line in text.split("\n"):
        physical.append((offset, offset + len(line)))
        offset += len(line) + 1
    blocks: list[list[int]] = []
    previous_text = ""
    for start, end in physical:
        line = text[start:end]
        if not line.strip():
            previous_text = ""
            continue
        continues = (
            blocks
            and previous_text
            and not re.search(r"[.!?:;]\s*$", previous_text)
            and not _BULLET_RE.match(line)
            and line.lstrip()[:1].islower()
        )
        if continues:
            blocks[-1][1] = end
        else:
            blocks.append([start, end])
        previous_text = line
    return [(s, e) for s, e in blocks]


def _tokenise(sentence: Sentence) -> None:
    """Fill a sentence's words, clause numbers and hyphen joins."""
    prepared = _prepare(sentence.text)
    clause = 0
    previous_end: int | None = None
    for match in _TOKEN_RE.finditer(prepared):
        word = match.group()
        joined = False
        gap = ""
        if previous_end is not None:
            gap = prepared[previous_end : match.start()]
            if _CLAUSE_PUNCT_RE.search(gap + " ") and gap.strip() not in _JOINERS:
                clause += 1
            joined = gap in _JOINERS
        if word in _CLAUSE_WORDS and sentence.words:
            clause += 1
        sentence.words.append(fold_word(word))
        sentence.raw.append(word)
        sentence.clauses.append(clause)
        sentence.joined.append(joined)
        sentence.gaps.append(gap)
        previous_end = match.end()


def _function_share(words: list[str]) -> float:
    """The share of function words (`_STOPWORDS`) among words as written."""
    return sum(1 for w in words if w in _STOPWORDS) / len(words) if words else 0.0


def _item_is_bare(item: str) -> bool:
    """A list item that only names a thing: at most four words, no subject, verb or relation."""
    words = _TOKEN_RE.findall(_prepare(item))
    if not words:
        return False
    if len(words) > 4 or _RELATION_RE.search(item):
        return False
    return not any(w in _CLAIM_WORDS or w.endswith("n't") for w in words)


def _bare_reason(sentence: Sentence) -> str | None:
    """Why a sentence is a list of buzzwords (or a keyword salad) rather than a claim: "list",
    "salad", or None when it says something.

    "Covers queues, dead replicas, cold starts" and "prefix aware router queue depth
    autoscaling cold start" name ideas without saying anything about them.
    """
    items = _list_items(sentence.text)
    bare = sum(1 for i in items if _item_is_bare(i))
    if len(items) >= 3 and bare >= 3 and bare >= len(items) - 1:
        return "list"
    words = sentence.raw
    if len(words) >= 8:
        # Natural English is a third function words; a keyword salad has next to none (one
        # "of" in "head-of-line" does not make eleven terms a sentence).
        if _function_share(words) < SALAD_FUNCTION_SHARE:
            return "salad"
    return None


def read_answer(text: str) -> AnswerReading:
    """Split an answer into sentences and mark the ones that cannot earn a point.

    A sentence cannot earn when it is a bare list of terms, or when it addresses the grader
    (instructions, forged chat turns, fake verdict JSON): see `_INJECTION_CUES`.
    """
    sentences: list[Sentence] = []
    blocks = _block_bounds(text)
    for block_start, block_end in blocks:
        block = text[block_start:block_end]
        bullet = _BULLET_RE.match(block)
        offset = bullet.end() if bullet else 0
        cursor = offset
        pieces = []
        for boundary in re.finditer(r"(?<=[.!?])\s+(?=\S)", block):
            if boundary.start() > cursor:
                pieces.append((cursor, boundary.start()))
            cursor = boundary.end()
        if cursor < len(block):
            pieces.append((cursor, len(block)))
        for piece_start, piece_end in pieces:
            piece = block[piece_start:piece_end]
            if not piece.strip():
                continue
            sentence = Sentence(
                index=len(sentences),
                start=block_start + piece_start,
                end=block_start + piece_end,
                text=piece.strip(),
                whole_line=len(pieces) == 1,
            )
            _tokenise(sentence)
            if sentence.words:
                sentences.append(sentence)

    for sentence in sentences:
        sentence.bare_reason = _bare_reason(sentence)
        sentence.bare_list = sentence.bare_reason is not None
        sentence.flags = tuple(_FLAG_RE.findall(sentence.text))
    _mark_bullet_runs(sentences)

    reasons: list[str] = []
    forged = [(m.start(), m.end()) for m in _FORGED_TURN_RE.finditer(text)]
    for sentence in sentences:
        # Invisible format characters (zero-width spaces, direction marks) could hide a cue
        # from the patterns while the model still reads the words.
        visible = "".join(c for c in sentence.text if unicodedata.category(c) != "Cf")
        for reason, pattern in _INJECTION_CUES:
            if pattern.search(visible):
                sentence.injection = reason
                break
        else:
            if any(s < sentence.end and sentence.start < e for s, e in forged):
                sentence.injection = "inside a forged chat turn"
        if sentence.injection and sentence.injection not in reasons:
            reasons.append(sentence.injection)
    if forged and "forged chat turn" not in reasons:
        reasons.append("forged chat turn")
    return AnswerReading(
        text=text,
        sentences=sentences,
        injection_reasons=reasons,
    )


def _mark_bullet_runs(sentences: list[Sentence]) -> None:
    """Short one-line fragments in a run of three or more are a bullet list of buzzwords.

    A lone fragment of three words or fewer ("Prefix-aware routing.") only names an idea too.
    """

    def fragment(s: Sentence) -> bool:
        return s.whole_line and _item_is_bare(s.text)

    run: list[Sentence] = []
    for sentence in [*sentences, None]:
        if sentence is not None and fragment(sentence):
            run.append(sentence)
            continue
        if len(run) >= 3:
            for s in run:
                s.bare_list = True
                s.bare_reason = "list"
        run = []
    for sentence in sentences:
        if fragment(sentence) and len(sentence.words) <= 3 and not sentence.bare_list:
            sentence.bare_list = True
            sentence.bare_reason = "fragment"


# --- phrase matching ----------------------------------------------------------------------------


def _negation_at(sentence: Sentence, start: int, end: int) -> int | None:
    """Where the word denying the words [start, end) in their clause stands, or None.

    Before the phrase: a negator directly in front, or separated only by light words ("we do
    not need a router", "no prefix-aware routing", "instead of round robin"). After it: an
    auxiliary plus "not"/"never", or an n't-word ("round robin doesn't work"). Negation inside
    a conditional ("if the router is not prefix-aware, ...") describes a failure mode and does
    not count.
    """
    clause = sentence.clauses[start]
    raw = sentence.raw

    def in_clause(i: int) -> bool:
        return 0 <= i < len(raw) and sentence.clauses[i] == clause

    first_in_clause = start
    while in_clause(first_in_clause - 1):
        first_in_clause -= 1

    def conditional_before(i: int) -> bool:
        return any(raw[k] in _CONDITIONALS for k in range(first_in_clause, i))

    # Before the phrase: the negator, then light words, then at most one other word directly
    # in front of the phrase (a modifier: "won't bother with gradual rollouts"). An idea joined
    # by "or" to an earlier one shares its denial ("no cooldown or hysteresis", "never causes
    # imbalance or hot spots"): the search steps over the "or" and the earlier idea's last
    # word, and a modifier may stand in front of that one too.
    i = start - 1
    front = start - 1
    gap = 0
    while in_clause(i) and gap <= 4:
        word = raw[i]
        if word == "or" and i == front and in_clause(i - 2):
            i -= 2
            front = i
            gap += 1
            continue
        if word == "of" and in_clause(i - 1) and raw[i - 1] == "instead":
            return None if conditional_before(i - 1) else i - 1
        if word == "than" and in_clause(i - 1) and raw[i - 1] == "rather":
            return None if conditional_before(i - 1) else i - 1
        if _is_negator(word):
            follower = raw[i + 1] if i + 1 < len(raw) else ""
            if follower in _NEGATION_NEUTRALISERS or (word == "no" and follower == "matter"):
                return None
            # "Without headroom, one dead replica cascades": a clause-initial "without" states
            # why the idea is needed.
            if word == "without" and i == first_in_clause:
                return None
            return None if conditional_before(i) else i
        if word not in _NEGATION_GAP and i != front:
            break
        i -= 1
        gap += 1

    # After the phrase.
    for i in range(end, min(end + 3, len(raw))):
        if not in_clause(i):
            break
        word = raw[i]
        follower = raw[i + 1] if i + 1 < len(raw) else ""
        if follower in _NEGATION_NEUTRALISERS:
            continue
        denial = word.endswith("n't") or (
            word in {"not", "never"} and i > end and raw[i - 1] in _AUXILIARIES
        )
        if denial:
            return None if conditional_before(end) else i
    return None


def _prohibits(sentence: Sentence, at: int) -> bool:
    """Whether the denying word at `at` makes a rule ("must never", "may not", "mustn't"):
    a prohibition states a requirement, it does not reject the idea it names."""
    word = sentence.raw[at]
    if word in _PROHIBITING_CONTRACTIONS:
        return True
    return word in {"not", "never"} and at > 0 and sentence.raw[at - 1] in _PROHIBITING_MODALS


def _negated(sentence: Sentence, start: int, end: int) -> bool:
    """Whether the words [start, end) are denied in their clause (`_negation_at`)."""
    return _negation_at(sentence, start, end) is not None


def find_phrase(sentence: Sentence, phrase: Phrase) -> list[Occurrence]:
    """Every occurrence of a phrase in a sentence, each marked negated or not.

    Words match after folding, each at the start of a word ("roll out" matches "rolled
    out", "rout" matches "routing"). A phrase also matches a hyphenated or run-together
    compound ("auto scal" matches "autoscaling" and "auto-scaling").
    """
    words = sentence.words
    n = len(phrase.words)
    found: list[Occurrence] = []
    if n == 0:
        return found
    spans: set[tuple[int, int]] = set()
    # The grader asks this of every sentence for every phrase of a rubric: the first word is
    # tested alone before the rest, so most positions cost one startswith.
    first = phrase.words[0]
    for i in range(len(words) - n + 1):
        if not words[i].startswith(first):
            continue
        if all(words[i + k].startswith(phrase.words[k]) for k in range(1, n)) and all(
            sentence.raw[i + k].endswith("'s") for k in range(n) if phrase.possessive[k]
        ):
            spans.add((i, i + n))
    if any(phrase.possessive):
        return _occurrences(sentence, spans)
    # Compounds: a run of hyphen-joined words also reads as one word, from any of its words.
    joined = phrase.joined
    for i, j in sentence.runs:
        if j == i + 1:  # a lone word: found above, unless it holds a longer phrase whole
            if n > 1 and words[i].startswith(joined):
                spans.add((i, j))
            continue
        for k in range(i, j):
            if "".join(words[k:j]).startswith(joined):
                spans.add((k, j))
    return _occurrences(sentence, spans)


def _occurrences(sentence: Sentence, spans: set[tuple[int, int]]) -> list[Occurrence]:
    found: list[Occurrence] = []
    for start, end in sorted(spans):
        denial = _negation_at(sentence, start, end)
        found.append(
            Occurrence(
                start,
                end,
                negated=denial is not None,
                lesser=_lesser(sentence, start, end),
                prohibited=denial is not None and _prohibits(sentence, denial),
            )
        )
    return found


def _lesser(sentence: Sentence, start: int, end: int) -> bool:
    """Whether the words [start, end) are the losing side of a comparison in their clause.

    The subject of a denied comparative ("one giant instance can't beat", "X will not match")
    or the object, within three words, of an affirmed one ("replicas beat one big TP
    instance").
    """
    raw, words, clauses = sentence.raw, sentence.words, sentence.clauses
    clause = clauses[start]

    def in_clause(i: int) -> bool:
        return 0 <= i < len(raw) and clauses[i] == clause

    # Subject: a denial right after the phrase, then (past one adverb) a comparative verb.
    i = end
    if in_clause(i) and i < len(raw):
        denial = raw[i].endswith("n't") or raw[i] in {"cannot", "never"}
        if not denial and raw[i] in _AUXILIARIES and in_clause(i + 1):
            denial = raw[i + 1] in {"not", "never"}
            i += 1
        if denial:
            for k in (i + 1, i + 2):
                if in_clause(k) and _is_comparative(words[k]):
                    return True
    # Object: an affirmed comparative a few words before the phrase.
    for k in range(start - 1, max(start - 4, -1), -1):
        if not in_clause(k):
            break
        if _is_comparative(words[k]):
            if words[k] in _PARITY or words[k][:-1] in _PARITY:
                return False
            before = raw[max(0, k - 2) : k]
            return not any(_is_negator(w) for w in before)
    return False


def _quote_index(text: str) -> tuple[str, list[int]]:
    """The answer in quote form, and for each of its characters the offset it came from."""
    chars: list[str] = []
    origin: list[int] = []
    for i, c in enumerate(text):
        if c.isspace():
            if chars and chars[-1] != " ":
                chars.append(" ")
                origin.append(i)
            continue
        for folded in c.casefold():
            chars.append(folded)
            origin.append(i)
    return "".join(chars), origin


def quote_span(text: str, quote: str) -> tuple[int, int] | None:
    """Where a quote sits in a text, as [start, end) offsets of the text; None when absent.

    The one verbatim matcher: compared after folding case and collapsing whitespace only, so
    a span found here is what the candidate typed. Highlighting and both graders use it.
    """
    wanted = normalise_for_quote(quote)
    if not wanted:
        return None
    form, origin = _quote_index(text)
    where = form.find(wanted)
    if where < 0:
        return None
    return origin[where], origin[where + len(wanted) - 1] + 1


def quote_in_answer(quote: str, reading: AnswerReading) -> list[Sentence] | None:
    """The sentences a quote overlaps, or None when it is not found verbatim in the answer."""
    span = quote_span(reading.text, quote)
    if span is None:
        return None
    start, end = span
    return [s for s in reading.sentences if s.start < end and start < s.end]


def folded_words(text: str) -> list[str]:
    """The words of any text in matching form (normalised, case and plurals folded)."""
    return [fold_word(w) for w in _TOKEN_RE.findall(_prepare(text))]
