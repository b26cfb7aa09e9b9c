"""IRT inputs: response matrices (CSV/TSV of 0/1, collection.response_matrix.read_response_matrix) and
the systems' components TSV (collection.systems.read_systems)."""
from __future__ import annotations

import numpy as np
import pytest

from exampp.errors import InputError
from exampp.formats.response_matrix import read_response_matrix
from exampp.formats.systems import read_systems

from .checks import assert_located, put, read_file, tries
from .strategies import hostile, matrix_text, systems_text


@pytest.mark.slow
@pytest.mark.parametrize("name", ["matrix.csv", "matrix.tsv", "matrix"])
@tries(60, data=hostile(matrix_text))
def test_read_response_matrix_gives_a_0_1_matrix_or_a_located_error(name, data):
    responses = read_file(read_response_matrix, name, data)
    if responses is not None:
        values = responses.values
        assert np.isin(values[~np.isnan(values)], (0.0, 1.0)).all()
        assert values.shape == (len(responses.respondents), len(responses.items))
        assert len(set(responses.respondents)) == len(responses.respondents)


@pytest.mark.slow
@pytest.mark.parametrize("options", [dict(id_column="system"), dict(weight_column="3"),
                                     dict(id_column="q1/a", weight_column="q1/b")])
@tries(30, data=hostile(matrix_text))
def test_read_response_matrix_with_named_columns_gives_a_matrix_or_a_located_error(options, data):
    responses = read_file(lambda p: read_response_matrix(p, **options), "m.csv", data)
    if responses is not None and responses.weights is not None:
        assert (responses.weights >= 0).all() and np.isfinite(responses.weights).all()


@pytest.mark.parametrize(("data", "options"), [(b"a\x0cb,a\x0cb\n1,0\n", {}),
                                               (b"x\x0cy,z\n1,0\n", {"id_column": "system"})])
def test_column_names_in_a_message_keep_it_on_one_line(tmp_path, data, options):
    path = put(tmp_path / "m.csv", data)  # a form feed in a column name broke the message's line
    with pytest.raises(InputError) as error:
        read_response_matrix(path, **options)
    assert_located(error.value, path, data)


@pytest.mark.slow
@tries(100, data=hostile(systems_text))
def test_read_systems_gives_a_table_or_a_located_error(data):
    systems = read_file(read_systems, "systems.tsv", data)
    if systems is not None:
        assert list(systems.columns[:1]) == ["system"] and systems["system"].is_unique
