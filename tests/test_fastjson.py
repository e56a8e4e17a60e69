"""fast_json: orjson's objects, and NOT_PARSED wherever a float may need the standard library."""
import pytest

from ragkit.fastjson import NOT_PARSED, fast_json


@pytest.mark.parametrize("line", [b'{"a": 1.5}', '{"a": [2e3]}', b'{"a": {"b": 1E-2}}',
                                  b'{"a": -0.0}', b'{"a": NaN}', b'{"a": "\\ud800"}'])
def test_lines_with_a_float_or_what_orjson_refuses_are_not_parsed(line):
    assert fast_json(line) is NOT_PARSED


@pytest.mark.parametrize("line, expected", [
    (b'{"id": "d1", "text": "Plain words. No digits."}', {"id": "d1", "text": "Plain words. No digits."}),
    ('{"n": 12, "s": "v2.5 and 3e"}', {"n": 12, "s": "v2.5 and 3e"}),  # digit-dot in a string
    (b'{"n": 18446744073709551615}', {"n": 18446744073709551615}),  # 20 digits, 64 bits
])
def test_lines_without_a_float_are_orjson_objects(line, expected):
    assert fast_json(line) == expected


@pytest.mark.parametrize("line", [b'{"big": 123456789012345678901234567890}',
                                  b'{"big": 18446744073709551616}'])
def test_integers_orjson_would_make_floats_are_not_parsed(line):
    assert fast_json(line) is NOT_PARSED  # the standard library keeps them whole
