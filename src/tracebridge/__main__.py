"""``python -m tracebridge``: the command as the ``tracebridge`` console script starts it
(``_tracebridge_cli``), so a Ctrl-C is one line and exit 130 here too. (``-m`` imports the
package itself before this module runs; the console script covers that import as well.)"""

import sys

from _tracebridge_cli import main

sys.exit(main())
