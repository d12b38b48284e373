"""The Fleet section (issue 26): the board (section.py) and its parts, a widget per file: the table (table.py), its
filter (filter.py), the account picker (picker.py); the board's rows and texts (rows.py)."""
