"""The app's own start reads its flags without building the subcommands' parsers (tui.cli.main.parse_arguments):
what it reads, and every error it reports, are the whole parser's."""

from __future__ import annotations

import pytest

from tui.cli.main import build_parser, parse_arguments

SAME_AS_THE_WHOLE_PARSER = [
    [],
    ["--sandbox"],
    ["--sandbox", "--instance-dialect", "zapi", "--session-dialect", "wuzapi", "--logged-out"],
    ["--profile", "call"],  # a profile named like a command is a profile
    ["--profiles", "a, b,,c", "--max-accounts", "3"],
    ["--sandbox", "--accounts", "4", "--insecure-storage"],
    ["call", "--list"],
    ["--profile", "shop", "doctor", "--fix"],
    ["fleet", "import", "--session-url", "http://127.0.0.1:9"],
    ["status", "--sandbox"],
]


@pytest.mark.parametrize("argv", SAME_AS_THE_WHOLE_PARSER, ids=" ".join)
def test_the_arguments_read_are_the_whole_parser_s(argv):
    def read(namespace):  # a parser a command keeps for its own help (`call_parser`) compares by what it reads
        return {name: value.format_usage() if hasattr(value, "format_usage") else value
                for name, value in vars(namespace).items()}

    assert read(parse_arguments(argv)) == read(build_parser().parse_args(argv))


@pytest.mark.parametrize("argv", [
    ["--instance-dialect", "bogus"],
    ["--profiles", ","],
    ["--bogus"],
    ["--max-accounts", "0"],
    ["call", "--bogus-flag"],
    ["nosuchcommand"],
])
def test_a_usage_error_is_said_once_in_the_whole_parser_s_words(argv, capsys):
    with pytest.raises(SystemExit) as whole:
        build_parser().parse_args(argv)
    expected = capsys.readouterr().err
    with pytest.raises(SystemExit) as ours:
        parse_arguments(argv)
    said = capsys.readouterr().err
    assert ours.value.code == whole.value.code == 2
    assert said == expected and said.count("error:") == 1


def test_help_is_the_whole_parser_s(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    expected = capsys.readouterr().out
    with pytest.raises(SystemExit):
        parse_arguments(["--help"])
    assert capsys.readouterr().out == expected and "campaign" in expected
