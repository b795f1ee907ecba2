"""``trainwell doctor run SCRIPT [ARGS...]`` and the preflight ``trainwell doctor [--config FILE] [train options]``."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "doctor", help="find the classic training bugs: watch a script, or preflight a config",
        description="`trainwell doctor run train.py [ARGS]` runs your unchanged PyTorch script and reports the "
                    "classic bugs with their cause and fix. `trainwell doctor [--config FILE] [--data ...]` "
                    "checks a trainwell config before a long run: data, shapes, one trial step, and whether "
                    "the model can overfit a tiny batch.")
    p.add_argument("--lang", choices=["en", "zh"], help="language of the findings (default: from the locale)")
    p.add_argument("--json", metavar="PATH", help="also write the findings as JSON")
    from trainwell.cli.config_options import add_config_options

    add_config_options(p)
    sub = p.add_subparsers(dest="doctor_command", metavar="run")
    r = sub.add_parser("run", help="run a training script under the doctor",
                       description="Runs SCRIPT as `python SCRIPT ARGS` would and reports problems on stderr. "
                                   "Exits with the script's own exit code.")
    r.add_argument("--lang", choices=["en", "zh"], dest="run_lang", help="language of the findings")
    r.add_argument("--json", metavar="PATH", dest="run_json", help="write the findings as JSON")
    r.add_argument("--nproc", type=int, default=1, metavar="N",
                   help="run the script in N processes (torchrun on this machine) and merge what every rank saw")
    r.add_argument("script", metavar="SCRIPT")
    r.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from trainwell.doctor.lang import detect_lang

    lang = detect_lang(getattr(args, "run_lang", None) or args.lang)
    json_path = getattr(args, "run_json", None) or args.json
    if json_path:  # where the command was typed, whatever folder the script changes to
        json_path = str(Path(json_path).expanduser().absolute())
    console = Console(stderr=True)
    if args.doctor_command == "run":
        from trainwell.machine import is_distributed

        if args.nproc != 1 or is_distributed():  # several processes: one merged report (cli/doctor_ranks.py)
            from trainwell.cli import doctor_ranks

            return (doctor_ranks.run_rank if is_distributed() else doctor_ranks.launch)(args, lang, json_path, console)
        return _run_script(args, lang, json_path, console)
    from trainwell.app.preflight import preflight
    from trainwell.cli.config_options import config_flags
    from trainwell.app.configure import resolve

    config = resolve(file=Path(args.config) if args.config else None, flags=config_flags(args), sets=args.set)
    from trainwell.app.auto import require_numbers

    require_numbers(config, "trainwell doctor")
    return preflight(config, lang=lang, json_path=Path(json_path) if json_path else None, console=console)


def _run_script(args: argparse.Namespace, lang: str, json_path: str | None, console: object) -> int:
    from trainwell.doctor.render import (findings_json, in_block, live_printer, print_internal_error, print_summary,
                                         write_json)
    from trainwell.doctor.runner import run_script, script_path
    from trainwell.doctor.session import Session

    script = script_path(args.script)
    session = Session(lang=lang, on_finding=in_block(live_printer(console, lang), console),
                      on_internal_error=in_block(lambda c, h, e: print_internal_error(c, h, e, console, lang), console),
                      debug=args.debug)
    code = run_script(script, list(args.args), session)
    findings = session.sorted_findings()
    in_block(lambda: print_summary(findings, console, lang, unjudged=session.unjudged), console)()
    if json_path:
        write_json(Path(json_path), findings_json(findings, script=str(args.script), exit_code=code,
                                                  internal_errors=session.internal_errors, unjudged=session.unjudged))
    return code
