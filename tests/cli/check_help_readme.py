"""Every subcommand the README's command table lists answers --help (exit 0), names
each option the table gives it, so the two cannot drift apart, and ends with its exit
codes and an example command line of itself (issue 17, item 4)."""
import re
import subprocess
import sys


def main():
    packwise, readme = sys.argv[1:3]
    rows = [l for l in open(readme, encoding="utf-8") if l.startswith("| `packwise ")]
    if len(rows) < 8:
        print("README: %d command rows, expected the whole table" % len(rows))
        return 1
    failures = 0
    for row in rows:
        usage = row.split("`")[1]
        cmd = usage.split()[1]
        # options in the usage and in the row's description (e.g. --values, --all)
        opts = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-o)\b", row)))
        p = subprocess.run([packwise, cmd, "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=30)
        text = p.stdout + p.stderr
        missing = [o for o in opts if o != "--help" and o not in text]
        footer = re.search(r"\nExit codes: 0 .*2 bad usage", p.stdout) is not None and \
            re.search(r"\nExample: packwise %s( |$)" % re.escape(cmd), p.stdout, re.M) is not None
        ok = p.returncode == 0 and not missing and footer
        print("%-12s --help: exit %d, %d options, missing %s, exit codes and example %s"
              % (cmd, p.returncode, len(opts), missing, "yes" if footer else "NO"))
        failures += not ok
    print("%d commands, %d failures" % (len(rows), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
