"""The Campaigns section (alt+0, issue 34): the campaigns in the ledger (name, state, sent/total, rate, ETA) and, for
the one chosen, a progress bar, its counts and each recipient's state (phone, state, message id or reason), live.

A run is a `gateway-tui campaign start|resume` process: started here by a key (`tui.core.campaigns.launch`) or in a
terminal beside the app; either way this section follows it by reading the ledger (SQLite in WAL: readers never
block the runner) once a second, and only while the section is shown. `p` pauses through the ledger, so it pauses
a run in another process too. What it needs is the ledger's path, nothing else of the app.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Self

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import DataTable, ProgressBar, Static

from tui.core.campaigns.launch import last_words, launch
from tui.core.campaigns.ledger import CampaignState, Ledger, LedgerUnusable, RecipientRow, RecipientState, ledger_path
from tui.core.campaigns.progress import Progress, eta_words, progress
from tui.ui.keymap import bindings_for
from tui.ui.widgets.section import ConfirmScreen
from tui.ui.widgets.section_api import Section

if TYPE_CHECKING:
    from tui.core.services import Services
    from tui.ui.widgets.gateway_app import AppState

READ_INTERVAL = 1.0
"""Seconds between two reads of the ledger while the section is shown."""

HELP = """\
### Campaigns

The campaigns made with `gateway-tui campaign create`, their state, how many recipients are settled of how many,
the rate and the time left. Choose one (up and down): its progress and each recipient's state show below, live,
whether it runs from here or from `gateway-tui campaign start` in another terminal.

- `s` starts the chosen campaign (it asks first: it sends real messages), or resumes it when it is paused.
- `p` pauses it after the send in flight, wherever it runs.

A run started here goes on if the app is closed; `gateway-tui campaign pause NAME` or `p` stops it.
"""


def _rate(found: Progress) -> str:
    return f"{found.per_minute:.1f}/min" if found.per_minute is not None else "—"


def _recipient_cells(row: RecipientRow) -> tuple[str, str, str]:
    said = row.message_id if row.state is RecipientState.SENT and row.message_id else (row.detail or "")
    return row.phone, row.state.value, said


class CampaignsSection(Section):
    BINDINGS = bindings_for("campaigns")
    HELP = HELP

    DEFAULT_CSS = """
    CampaignsSection { height: 1fr; }
    CampaignsSection #campaign-list { height: auto; max-height: 6; }
    CampaignsSection #campaign-bar { height: 1; padding: 0 1; }
    CampaignsSection #campaign-bar ProgressBar { width: auto; }
    CampaignsSection #campaign-counts { height: 1; padding: 0 1; }
    CampaignsSection #campaign-line { height: auto; padding: 0 1; color: $text-muted; }
    CampaignsSection #campaign-recipients { height: 1fr; }
    """

    def __init__(self, state: AppState | None = None, ledger_file: Path | None = None) -> None:
        """`state`: where the app keeps secrets, for a run started here (None: the keyring)."""
        super().__init__(id="campaigns-section")
        self.state = state
        self.ledger_file = ledger_file or ledger_path()
        self._ledger: Ledger | None = None
        self.shown: list[Progress] = []
        """The campaigns as last read, in the list's order."""
        self.chosen: str | None = None
        self._recipients_seen: tuple[object, ...] = ()  # what the recipients table was last drawn from
        self._run: subprocess.Popen[bytes] | None = None  # a run started here
        self._run_name = ""
        self._note = ""  # what the last key or run said; shown instead of the state until the next one


    @classmethod
    def with_services(cls, services: Services, state: AppState) -> Self:
        return cls(state)
    def compose(self) -> ComposeResult:
        table: DataTable[str] = DataTable(id="campaign-list", cursor_type="row", zebra_stripes=True)
        for title, key in (("Campaign", "name"), ("State", "state"), ("Sent", "sent"), ("Rate", "rate"),
                           ("ETA", "eta")):
            table.add_column(title, key=key)
        yield table
        with Horizontal(id="campaign-bar"):
            yield ProgressBar(id="campaign-progress", show_eta=False)
        yield Static(id="campaign-counts")
        yield Static(id="campaign-line")
        recipients: DataTable[str] = DataTable(id="campaign-recipients", cursor_type="row")
        for title, key in (("Phone", "phone"), ("State", "state"), ("Message id or reason", "said")):
            recipients.add_column(title, key=key)
        yield recipients

    def on_mount(self) -> None:
        self.read()
        self.set_interval(READ_INTERVAL, self._tick, name="campaigns ledger")

    def on_unmount(self) -> None:
        if self._ledger is not None:
            self._ledger.close()

    @property
    def campaign_list(self) -> DataTable[str]:
        return self.query_one("#campaign-list", DataTable)

    def _tick(self) -> None:
        # The slot the section sits in is hidden while another section shows: no reads then.
        if self.parent is not None and self.parent.display and self.screen.is_current:
            self.read()

    def on_show(self) -> None:
        self.read()

    def say(self, words: str) -> None:
        self.query_one("#campaign-line", Static).update(Content(words))

    # -- reading the ledger ----------------------------------------------------------------------------------------

    def _open_ledger(self) -> Ledger | None:
        if self._ledger is None:
            if not self.ledger_file.exists():  # nothing made yet: do not create the file by looking
                return None
            try:
                self._ledger = Ledger(self.ledger_file).open()
            except LedgerUnusable as error:
                self.say(str(error))
                return None
        return self._ledger

    def read(self) -> None:
        """Read the campaigns' progress and redraw what changed; the chosen campaign's recipients when they moved."""
        self._watch_run()
        ledger = self._open_ledger()
        if ledger is None:
            self.shown = []
            self._draw_list()
            self._draw_chosen(None)
            return
        self.shown = [progress(ledger, campaign) for campaign in ledger.campaigns()]
        if self.chosen not in {found.campaign.name for found in self.shown}:
            self.chosen = self.shown[0].campaign.name if self.shown else None
        self._draw_list()
        chosen = self.chosen_progress
        self._draw_chosen(chosen)
        if chosen is not None:
            seen = (chosen.campaign.name, chosen.campaign.updated_us, tuple(sorted(chosen.counts.items())))
            if seen != self._recipients_seen:
                self._recipients_seen = seen
                self._draw_recipients(ledger.recipients(chosen.campaign.name))
        self.refresh_bindings()

    @property
    def chosen_progress(self) -> Progress | None:
        return next((found for found in self.shown if found.campaign.name == self.chosen), None)

    def _draw_list(self) -> None:
        table = self.campaign_list
        rows = [(found.campaign.name, found.campaign.state.value, f"{found.settled}/{found.total}",
                 _rate(found) if found.campaign.state is CampaignState.RUNNING else "—",
                 eta_words(found.eta_seconds) if found.campaign.state is CampaignState.RUNNING else "—")
                for found in self.shown]
        names = [row[0] for row in rows]
        if [str(key.value) for key in table.rows] != names:
            table.clear()
            for row in rows:
                table.add_row(*row, key=row[0])
            if self.chosen in names:
                table.move_cursor(row=names.index(self.chosen), animate=False)
            return
        for row in rows:  # in place: the cursor stays where the user put it
            for key, value in zip(("state", "sent", "rate", "eta"), row[1:], strict=True):
                table.update_cell(row[0], key, value, update_width=True)

    def _draw_chosen(self, found: Progress | None) -> None:
        bar = self.query_one("#campaign-progress", ProgressBar)
        counts = self.query_one("#campaign-counts", Static)
        if found is None:
            bar.update(total=None, progress=0)
            counts.update("")
            if self._ledger is None:
                self.say("No campaigns yet: `gateway-tui campaign create NAME --recipients FILE --text TEXT` makes "
                         "one.")
            return
        bar.update(total=max(found.total, 1), progress=found.settled)
        shown = ", ".join(f"{count} {state.value}" for state, count in sorted(found.counts.items()) if count)
        running = found.campaign.state is CampaignState.RUNNING
        pace = f" · {_rate(found)} · ETA {eta_words(found.eta_seconds)}" if running else ""
        counts.update(Content(f"{found.campaign.name}: {found.settled}/{found.total} · {shown}{pace}"))
        reason = f" ({found.campaign.reason})" if found.campaign.reason else ""
        self.say(self._note or f"{found.campaign.state.value}{reason}")

    def _draw_recipients(self, rows: list[RecipientRow]) -> None:
        table: DataTable[str] = self.query_one("#campaign-recipients", DataTable)
        keys = [str(key.value) for key in table.rows]
        wanted = [str(row.position) for row in rows]
        if keys != wanted:
            table.clear()
            for row in rows:
                table.add_row(*_recipient_cells(row), key=str(row.position))
            return
        for row in rows:
            for key, value in zip(("phone", "state", "said"), _recipient_cells(row), strict=True):
                if table.get_cell(str(row.position), key) != value:
                    table.update_cell(str(row.position), key, value, update_width=True)

    @on(DataTable.RowHighlighted, "#campaign-list")
    def _chosen(self, event: DataTable.RowHighlighted) -> None:
        name = str(event.row_key.value) if event.row_key.value is not None else None
        if name != self.chosen:
            self.chosen = name
            self._note = ""
            self._recipients_seen = ()
            self.read()

    # -- the keys --------------------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        wanted = {"start": CampaignState.READY, "resume": CampaignState.PAUSED, "pause": CampaignState.RUNNING}
        if action not in wanted:
            return True
        chosen = self.chosen_progress
        return chosen is not None and chosen.campaign.state is wanted[action]

    def action_start(self) -> None:
        chosen = self.chosen_progress
        if chosen is None or chosen.campaign.state is not CampaignState.READY:
            return
        name = chosen.campaign.name

        def answered(yes: bool | None) -> None:
            if yes:
                self._launch("start", name)
            else:
                self._note = "Nothing was sent."
                self.read()

        self.app.push_screen(ConfirmScreen(
            f"Start campaign {name}: {chosen.total} messages from {', '.join(chosen.campaign.profiles)}?",
            "Real messages go out at the campaign's pace until it is done or paused (p).",
            confirm_label="Start"), answered)

    def action_resume(self) -> None:
        chosen = self.chosen_progress
        if chosen is not None and chosen.campaign.state is CampaignState.PAUSED:
            self._launch("resume", chosen.campaign.name)

    def action_pause(self) -> None:
        chosen = self.chosen_progress
        ledger = self._open_ledger()
        if chosen is None or ledger is None:
            return
        if ledger.pause_if_running(chosen.campaign.name, "paused from the app"):
            self._note = ""  # the state line says it: paused (paused from the app)
        self.read()

    def _launch(self, action: str, name: str) -> None:
        if self._run is not None and self._run.poll() is None:
            self._note = f"Campaign {self._run_name} is still running from here."
            self.read()
            return
        self._run = launch("start" if action == "start" else "resume", name,
                           insecure_storage=self.state is not None and self.state.insecure_storage)
        self._run_name = name
        self._note = ""
        self.say(f"{'Starting' if action == 'start' else 'Resuming'} {name}…")

    def _watch_run(self) -> None:
        """A run started here that ended with a refusal says why (a paused or finished one shows in the ledger)."""
        run = self._run
        if run is None or run.poll() is None:
            return
        self._run = None
        words = last_words(run)
        if run.returncode not in (0, 130) and words:
            self._note = words
