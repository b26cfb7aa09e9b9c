"""What an assessor judges: each pair of an assessment sample with the texts to read (the query, its
description and narrative where the topics have them, the passage, or a run's answer and one
nugget), the grade scale, and the sample written out for other tools (TSV with texts, Label
Studio's tasks and labeling config).

Nothing here carries the judge's view of a pair: a sample's ``stratum`` is often the judge's grade,
and its inclusion probability differs by stratum, so neither is shown to an assessor nor exported
for one; an answers file's nugget assignments (the judge's, or the track's) are never read into a
task. The estimators read the design from the sample file itself.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import quoteattr

from exampp.collection.topics import Topic
from exampp.errors import InputError
from exampp.files.io import PathLike, atomic_write
from exampp.formats.assessment_sample import NUGGET_COLUMNS, PASSAGE_COLUMNS, SamplePair
from exampp.formats.nugget_assignments import ASSIGNMENTS, Answer
from exampp.stores.assessments import LS_GRADE, LS_NOTE


@dataclass(frozen=True)
class Grade:
    value: int
    name: str
    hint: str = ""  # what the grade means, shown beside it


@dataclass(frozen=True)
class Scale:
    """The grades an assessor chooses from, each given by its number key (0-9)."""

    grades: tuple[Grade, ...]

    def __contains__(self, value: object) -> bool:
        return any(grade.value == value for grade in self.grades)

    def name(self, value: int) -> str:
        return next(grade.name for grade in self.grades if grade.value == value)

    def spec(self) -> str:
        """The scale as ``--grades`` spells it."""
        return ",".join(f"{grade.value}:{grade.name}" for grade in self.grades)


# TREC Deep Learning's passage grades and the descriptions of its assessors' guidelines.
PASSAGE_SCALE = Scale((
    Grade(0, "irrelevant", "The passage has nothing to do with the query."),
    Grade(1, "related", "The passage seems related to the query but does not answer it."),
    Grade(2, "highly relevant", "The passage has some answer for the query, but it may be unclear or hidden "
                                "among extraneous information."),
    Grade(3, "perfectly relevant", "The passage is dedicated to the query and contains the exact answer."),
))
# The TREC RAG track's nugget assignment (exampp.formats.nugget_assignments: grade = index).
_NUGGET_HINTS = ("The answer does not support the nugget.", "The answer supports the nugget in part.",
                 "The answer supports the nugget fully.")
NUGGET_SCALE = Scale(tuple(Grade(value, name, hint)
                           for value, (name, hint) in enumerate(zip(ASSIGNMENTS, _NUGGET_HINTS, strict=True))))

_SCALE_ITEM = re.compile(r"([0-9])(?::(.*))?")


def parse_scale(text: str) -> Scale:
    """A scale from ``--grades``: comma-separated ``grade:name`` items (``0:no,1:partly,2:yes``; a bare
    ``grade`` is named by its number), grades 0-9 (each is typed with its digit key), at least two,
    no grade twice. A ValueError says what is wrong."""
    grades: list[Grade] = []
    for item in text.split(","):
        match = _SCALE_ITEM.fullmatch(item.strip())
        if match is None:
            raise ValueError(f"{item.strip()!r} is not 'grade:name' with a grade from 0 to 9 (a digit key gives it)")
        value = int(match.group(1))
        name = (match.group(2) or "").strip() or str(value)
        if any(grade.value == value for grade in grades):
            raise ValueError(f"grade {value} is given twice")
        grades.append(Grade(value, name))
    if len(grades) < 2:
        raise ValueError("a scale needs at least two grades")
    return Scale(tuple(grades))


@dataclass(frozen=True)
class Task:
    """One pair with what the assessor reads: ``text`` is the passage, or the run's answer for a
    nugget pair, whose ``nugget`` is the nugget's text."""

    pair: SamplePair
    query: str
    text: str
    description: str | None = None
    narrative: str | None = None
    nugget: str | None = None

    @property
    def ids(self) -> dict[str, str]:
        """The columns that name the pair in a sample (query_id, doc_id; or query_id, run, nugget_id)."""
        pair = self.pair
        if pair.is_nugget:
            return {"query_id": pair.query_id, "run": str(pair.run), "nugget_id": str(pair.nugget_id)}
        return {"query_id": pair.query_id, "doc_id": str(pair.doc_id)}

    def view(self) -> dict[str, Any]:
        """What the assessors' page shows of the pair (as JSON): texts and ids, nothing of the design."""
        return {"query_id": self.pair.query_id, "key": self.pair.key, **self.ids, "query": self.query,
                "description": self.description, "narrative": self.narrative, "text": self.text,
                "nugget": self.nugget}


def build_tasks(pairs: Sequence[SamplePair], topics: Mapping[str, Topic], passages: Mapping[str, str],
                answers: Sequence[Answer], *, sample: str, topics_file: str = "", texts: str = "") -> list[Task]:
    """The sample's pairs with their texts, in sample order. A passage pair's query must be in
    ``topics`` and its passage in ``passages``; a nugget pair's run must have answered its topic in
    ``answers``, whose nugget list ``nugget_id`` indexes (0 is the first); a nugget pair takes its
    query's text from the answers file when the topics lack it. ``sample``, ``topics_file`` and
    ``texts`` (the corpus, or the answers file) name the files in an :class:`InputError` about a pair
    without its texts."""
    by_answer = {(answer.run_id, answer.query_id): answer for answer in answers}
    tasks = []
    for pair in pairs:
        topic = topics.get(pair.query_id)
        if not pair.is_nugget:
            if topic is None:
                raise InputError(sample, None, f"query {pair.query_id!r} is not in the topics {topics_file}")
            if pair.doc_id not in passages:
                raise InputError(sample, None, f"passage {pair.doc_id!r} (query {pair.query_id}) is not in the "
                                               f"corpus {texts}")
            tasks.append(Task(pair, topic.text, passages[str(pair.doc_id)], topic.description, topic.narrative))
            continue
        answer = by_answer.get((str(pair.run), pair.query_id))
        if answer is None:
            raise InputError(sample, None, f"run {pair.run!r} has no answer to topic {pair.query_id!r} in {texts}")
        index = int(str(pair.nugget_id)) if str(pair.nugget_id).isdigit() else -1
        if not 0 <= index < len(answer.nuggets):
            raise InputError(sample, None, f"nugget_id {pair.nugget_id!r} of topic {pair.query_id}: the topic has "
                                           f"{len(answer.nuggets)} nuggets in {texts} (nugget_id 0 is the first)")
        query = topic.text if topic is not None else answer.query or pair.query_id
        tasks.append(Task(pair, query, answer.text, topic.description if topic else None,
                          topic.narrative if topic else None, answer.nuggets[index].text))
    return tasks


_LINE_BREAKING = re.compile("[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def write_tasks_tsv(tasks: Sequence[Task], path: PathLike) -> int:
    """The pairs for other tools as TSV: the columns that name a pair in the sample, then ``query``,
    ``description``, ``narrative`` and ``text`` (and ``nugget``), tabs and line breaks in texts
    written as spaces so that a pair stays one line; atomically. The number of pairs written."""
    nuggets = bool(tasks) and tasks[0].pair.is_nugget
    columns = [*(NUGGET_COLUMNS[:3] if nuggets else PASSAGE_COLUMNS[:2]), "query", "description", "narrative",
               "text", *(["nugget"] if nuggets else [])]
    with atomic_write(path) as out:
        out.write("\t".join(columns) + "\n")
        for task in tasks:
            row = {**task.ids, **task.view()}
            out.write("\t".join(_LINE_BREAKING.sub(" ", row[column] or "") for column in columns) + "\n")
    return len(tasks)


def label_studio_tasks(tasks: Sequence[Task]) -> list[dict[str, Any]]:
    """Label Studio's task list: one ``{"data": {...}}`` per pair, with the fields of :meth:`Task.view`
    (a missing description, narrative or nugget as ``""``, which Label Studio shows as nothing).
    ``query_id`` and ``key`` bring its annotations back to the pair (:func:`exampp.stores.assessments.read_labels`)."""
    return [{"data": {name: value if value is not None else "" for name, value in task.view().items()}}
            for task in tasks]


def write_label_studio(tasks: Sequence[Task], path: PathLike) -> int:
    """Write :func:`label_studio_tasks` as JSON, atomically; the number of tasks."""
    with atomic_write(path) as out:
        json.dump(label_studio_tasks(tasks), out, ensure_ascii=False, indent=1)
        out.write("\n")
    return len(tasks)


def labeling_config(scale: Scale, *, nuggets: bool) -> str:
    """Label Studio's labeling config for the tasks: the query and its guidance, the passage (or the
    answer and the nugget), one ``grade`` choice per grade of ``scale`` (its alias the grade, its
    hotkey the grade's digit) and a ``note`` text area."""
    target = "nugget" if nuggets else "text"
    lines = ["<View>", '  <Header value="$query"/>', '  <Text name="description" value="$description"/>',
             '  <Text name="narrative" value="$narrative"/>']
    if nuggets:
        lines += ['  <Header value="Answer" size="5"/>', '  <Text name="text" value="$text"/>',
                  '  <Header value="Nugget: does the answer support it?" size="5"/>',
                  '  <Text name="nugget" value="$nugget"/>']
    else:
        lines += ['  <Header value="Passage" size="5"/>', '  <Text name="text" value="$text"/>']
    lines.append(f'  <Choices name="{LS_GRADE}" toName="{target}" choice="single-radio" required="true">')
    lines += [f"    <Choice value={quoteattr(f'{g.value} {g.name}')} alias=\"{g.value}\" hotkey=\"{g.value}\""
              + (f" hint={quoteattr(g.hint)}" if g.hint else "") + "/>" for g in scale.grades]
    lines += ["  </Choices>", f'  <TextArea name="{LS_NOTE}" toName="{target}" rows="2" '
                              'placeholder="Note (optional)"/>', "</View>"]
    return "\n".join(lines) + "\n"
