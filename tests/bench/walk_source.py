"""A small Python file the cursor-case tests of ``bench model`` draw their cases from: a function
with a loop, a blank line inside its body, and nested blocks."""

SOURCE = """import os


def walk(top, names):
    found = []
    for name in names:
        path = os.path.join(top, name)

        if os.path.isdir(path):
            found.append(path)
    return found
"""
