"""Topics (JSON map, JSON list, JSONL, TSV), question banks (exampp, reference, reference-nuggets,
CAR) and passage files (JSONL, TSV): read_topics, read_question_bank, read_passages;
write_topics, write_question_bank (every format), write_corpus."""
from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import example, strategies as st

from exampp.collection.corpus import Passage
from exampp.collection.questions import Question, QuestionBank
from exampp.collection.topics import Subtopic, Topic
from exampp.errors import InputError
from exampp.formats.corpus_sources import read_passages, write_corpus
from exampp.formats.question_bank import READ_FORMATS, WRITE_FORMATS, read_question_bank, write_question_bank
from exampp.formats.topic_files import read_topics, write_topics

from .checks import assert_ids, can_write, encodable, parse, read_file, scratch, tries, written_or_refused
from .strategies import bank_text, corpus_text, hostile, hostile_ids, texts, topics_text


@pytest.mark.slow
@tries(150, data=hostile(topics_text))
def test_read_topics_gives_topics_or_a_located_error(data):
    topics = read_file(read_topics, "topics", data)
    if topics is not None:
        assert_ids(topics, first_column=True)
        assert_ids(s.facet_id for t in topics.values() for s in t.subtopics)
        assert all(t.text.strip() for t in topics.values())


@pytest.mark.slow
@pytest.mark.parametrize("fmt", READ_FORMATS)
@tries(60, data=hostile(bank_text))
def test_read_question_bank_gives_a_bank_or_a_located_error(fmt, data):
    bank = read_file(lambda p: read_question_bank(p, fmt), "bank.jsonl", data)
    if bank is not None:
        assert_ids((q.query_id for q in bank), first_column=True)
        assert_ids(q.question_id for q in bank)
        assert_ids(q.facet_id for q in bank if q.facet_id is not None)


@pytest.mark.slow
@tries(150, data=hostile(corpus_text))
def test_read_passages_gives_texts_or_a_located_error(data):
    passages = read_file(read_passages, "corpus", data)
    if passages is not None:
        assert_ids(passages)
        assert all(isinstance(text, str) for text in passages.values())


subtopics = st.lists(st.tuples(hostile_ids(), texts), max_size=2, unique_by=lambda s: s[0])


@pytest.mark.slow
@tries(150, topics=st.dictionaries(hostile_ids(first_column=True), st.tuples(texts, subtopics), max_size=3))
@example(topics={"q1": ("text", [("a b", "facet")])})  # was written, then refused by read_topics
def test_written_topics_read_back_as_written_or_are_refused(topics):
    written = [Topic(q, text, tuple(Subtopic(f, t) for f, t in subs)) for q, (text, subs) in topics.items()]
    facets = [f for _, subs in topics.values() for f, _ in subs]
    with scratch() as folder:
        path = folder / "topics.jsonl"
        if not written_or_refused(lambda p: write_topics(written, p), path):
            assert not can_write(*facets, first_column=topics) or not all(map(encodable, _topic_texts(written)))
            return
        assert can_write(*facets, first_column=topics)
        back = parse(read_topics, path)
    if back is None:  # only a blank text is refused, by the reader, as such
        assert not written or not all(t.strip() for t in _topic_texts(written))
        return
    assert back == {t.query_id: Topic(t.query_id, t.text.strip(), tuple(Subtopic(s.facet_id, s.text.strip())
                                                                        for s in t.subtopics)) for t in written}


def test_a_query_id_twice_in_a_json_map_of_topics_is_refused(tmp_path):
    path = tmp_path / "topics.json"
    path.write_text('{"q1": "first", "q2": "x",\n "q1": "second"}\n')  # was read as {"q1": "second", ...}
    with pytest.raises(InputError, match=r"topics.json: duplicate query id 'q1'"):
        read_topics(path)


def _topic_texts(topics: list[Topic]) -> list[str]:
    return [t.text for t in topics] + [s.text for t in topics for s in t.subtopics]


@st.composite
def questions(draw) -> tuple[QuestionBank | None, list[tuple]]:
    """A bank of questions with hostile ids, or None when building it refused one (and why)."""
    specs = draw(st.lists(st.tuples(hostile_ids(first_column=True), hostile_ids(), texts,
                                    st.none() | hostile_ids(), st.lists(st.sampled_from(["a", "b"]), max_size=2),
                                    st.none() | st.sampled_from(["manual", "generated:t5"])),
                          min_size=1, max_size=4, unique_by=lambda s: s[1]))
    # A blank title is no title (the formats differ in how they say so); " / " ends a CAR title.
    titles = (texts | st.sampled_from(["Earth / Moon", "T /"])).filter(str.strip)
    bank = QuestionBank(query_texts={s[0]: draw(titles) for s in specs if draw(st.booleans())})
    for query_id, question_id, text, facet_id, answers, source in specs:
        try:
            facet_text = None if facet_id is None else f"facet {facet_id}"
            bank.add(Question(query_id, question_id, text, facet_id, facet_text,
                              answers=tuple(answers), source=source))
        except ValueError:
            assert not can_write(question_id, *([] if facet_id is None else [facet_id]), first_column=[query_id]) \
                or not text.strip()
            return None
    return bank


@pytest.mark.slow
@pytest.mark.parametrize("fmt", WRITE_FORMATS)
@tries(60, bank=questions())
def test_a_written_bank_reads_back_with_the_same_ids_or_is_refused(fmt, bank):
    if bank is None:
        return
    with scratch() as folder:
        path = folder / "bank.jsonl"
        if not written_or_refused(lambda p: write_question_bank(bank, p, fmt), path):
            return  # an unencodable text, or what CAR cannot hold (several answers)
        back = read_question_bank(path)
        again = read_question_bank(path, fmt)
    assert again == back
    assert [_ids(q) for q in back] == [_ids(q) for q in bank]
    expected = [replace(q, source=None) if fmt == "car" else q for q in bank]  # CAR has no place for a source
    assert back.questions == expected and back.query_texts == bank.query_texts


def test_car_refuses_a_title_that_would_split_at_a_facet_separator(tmp_path):
    bank = QuestionBank([Question("q1", "q1/a", "What?", "f1", "Geology")], query_texts={"q1": "Earth / Moon"})
    with pytest.raises(ValueError, match="cannot hold a query title with ' / '"):
        write_question_bank(bank, tmp_path / "car.jsonl", "car")  # it was read back as 'Earth', 'Moon / Geology'
    assert not (tmp_path / "car.jsonl").exists()
    write_question_bank(bank, tmp_path / "ref.jsonl", "reference")
    assert read_question_bank(tmp_path / "ref.jsonl") == bank


def _ids(question: Question) -> tuple:
    return question.query_id, question.question_id, question.facet_id, question.text


@pytest.mark.slow
@tries(150, passages=st.lists(st.tuples(hostile_ids(), texts), max_size=4, unique_by=lambda p: p[0]))
def test_a_written_corpus_reads_back_as_written_or_is_refused(passages):
    with scratch() as folder:
        path = folder / "corpus.jsonl"
        if not written_or_refused(lambda p: write_corpus([Passage(*p) for p in passages], p), path):
            assert not can_write(*(d for d, _ in passages)) or not all(encodable(t) for _, t in passages)
            return
        assert can_write(*(d for d, _ in passages))
        back = parse(read_passages, path)
    assert back == (dict(passages) or None)  # no passages: refused by the reader as empty
