#!/usr/bin/env python3
"""The data document a report page embeds (`eventlog-live report`,
docs/report.md "Data"): the JSON inside its
<script type="application/json" id="el-data"> element. One reading of it
for every end-to-end test that checks a page's data
(test_report.sh, test_report_cut.sh, test_report_corrupt_part.sh,
test_file_sessions_clock.sh, report_pipe_check.py).

From Python (tests/e2e on sys.path: a script in this folder has it; a
here-document run as `PYTHONPATH=$SRC/tests/e2e python3 - ...` too):

    from report_data import page_data
    d = page_data("page.html")      # the document, parsed

From the shell:

    report_data.py PAGE.html         # the document's JSON text on stdout
    report_data.py PAGE.html EXPR    # print(EXPR), d being the document

A page without the element (or not a page) is an error: an exception
from Python, exit status 1 from the command line, so that the test
reading it fails."""
import json
import re
import sys

# The element as the page's template writes it (web/report/report.html),
# attributes in that order: the page's own script names the element in a
# comment ('<script id="el-data">'), which must not match.
_DATA = re.compile(
    r'<script type="application/json" id="el-data"[^>]*>(.*?)</script>', re.S)


def page_text(path):
    """The JSON text of the page at path, as the page holds it."""
    html = open(path, encoding='utf-8').read()
    m = _DATA.search(html)
    if not m:
        raise ValueError(f'{path}: no <script id="el-data"> element: '
                         'not a report page?')
    return m.group(1)


def page_data(path):
    """The data document of the page at path, parsed."""
    return json.loads(page_text(path))


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit('usage: report_data.py PAGE.html [EXPR]')
    try:
        if len(argv) == 2:
            print(page_text(argv[1]))
        else:
            d = page_data(argv[1])
            print(eval(argv[2], {'d': d}))
    except (OSError, ValueError) as e:
        sys.exit(f'report_data.py: {e}')


if __name__ == '__main__':
    main(sys.argv)
