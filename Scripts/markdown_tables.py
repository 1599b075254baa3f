"""Markdown tables in the commands' output, read by their column headers (so that a column added to a
table moves nothing in what reads it): `Scripts/update-results` imports it."""
import sys


def table(lines, first):
    """The rows of the first Markdown table in `lines` whose header row starts with the cell `first`,
    each a dictionary by column name; exits with a message naming `first` when there is none."""
    header = next((i for i, line in enumerate(lines) if line.startswith("| " + first + " |")), None)
    if header is None:
        sys.exit(f"update-results: no table headed '{first}'")
    names = [c.strip() for c in lines[header].strip("|").split("|")]
    rows = []
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(names, (c.strip() for c in line.strip("|").split("|")))))
    return rows
