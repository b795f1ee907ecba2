"""The doctor: finds the classic training bugs in any PyTorch code and says the cause and the fix.

    from trainwell import doctor
    with doctor.watch() as session:
        ...  # your training loop
    print(session.findings)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainwell.doctor.session import Session


@contextmanager
def watch(*, lang: str | None = None, show: bool = True) -> Iterator[Session]:
    """Watch the PyTorch code run inside the ``with`` block; findings are printed as they are
    found (``show=True``) and listed in ``session.findings``."""
    from rich.console import Console

    from trainwell.doctor.lang import detect_lang
    from trainwell.doctor.render import live_printer, print_summary
    from trainwell.doctor.session import Session

    language = detect_lang(lang)
    console = Console(stderr=True)
    session = Session(lang=language, on_finding=live_printer(console, language) if show else None)
    with session:
        try:
            yield session
        except BaseException as e:
            session.error(e)
            raise
        finally:
            session.end()
    if show:
        print_summary(session.sorted_findings(), console, language, unjudged=session.unjudged)


__all__ = ["watch"]
