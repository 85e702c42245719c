"""Blocks of guest/init's console between marker lines.

guest/init and the scripts vmbench runs in a guest print their results
between "=== WHAT BEGIN name ===" and "=== WHAT END name ... ===" lines,
with the kernel's own messages possibly in between.
"""


def blocks(lines, begin, end):
    """(name, end's match, [lines in between]) for each block that ends:
    BEGIN and END are compiled patterns whose group 1 is the name; a
    block opened again before its end starts over, one without an end
    (a guest that died) is left out."""
    cur, body = None, []
    for line in lines:
        m = begin.match(line)
        if m:
            cur, body = m.group(1), []
            continue
        m = end.match(line)
        if m and m.group(1) == cur:
            yield cur, m, body
            cur = None
        elif cur is not None:
            body.append(line)
