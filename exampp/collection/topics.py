"""Topics as data: a query, its subtopics (facets, e.g. TREC CAR sections) and, as TREC topics have
them, a description and a narrative (what the assessors of a track read besides the query).

The topic file formats, their readers and writer, are :mod:`exampp.formats.topic_files`.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Subtopic:
    """A facet of a query (a subtopic), which questions and facet qrels refer to by id.

    :param facet_id: The facet's id, unique within its query.
    :param text: What the facet asks for.
    """

    facet_id: str
    text: str


@dataclass(frozen=True)
class Topic:
    """A query, with its facets and guidance where the topics give them.

    :param query_id: The query's id, as in the runs and qrels.
    :param text: The query (its title).
    :param subtopics: Its facets, in order.
    :param description: What the query means (TREC's ``<desc>``), where the topics give it.
    :param narrative: What makes a passage relevant (TREC's ``<narr>``), where given.
    """

    query_id: str
    text: str
    subtopics: tuple[Subtopic, ...] = ()
    description: str | None = None
    narrative: str | None = None
