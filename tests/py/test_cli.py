"""bench/vmbench COMMAND (vmharness/cli.py): one function per command,
a table from the command to it, and a short main (issue 50)."""
import argparse
import ast
import inspect

from vmharness import cli


def test_every_sub_command_has_its_function_and_main_stays_short():
    sub = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(cli.COMMANDS)
    assert all(callable(f) for f in cli.COMMANDS.values())
    main = ast.parse(inspect.getsource(cli.main)).body[0]
    assert main.end_lineno - main.lineno + 1 <= 20, "cli.main: a branch per command again?"
