"""A hall restored from a backup is behind what it reported to the regulator's receiver: it stops at the
receiver's first word; with the records the receiver holds after the backup taken back, it serves on.

Real processes: a hall (``bingo hall serve``) feeding the reference receiver (``bingo regulator
serve``) over mutual TLS.  The hall is backed up while it runs, then moves money (its cash desk's
float topped up twice), which the receiver acknowledges; the machine is lost.  Restored alone, the
hall stops (docs/security.md, "A hall rolled back"); restored with ``bingo regulator
export-records`` taken back (``bingo restore --records``), it starts, the receiver says it holds
nothing the journal lacks, and the desk holds what it held before the loss (docs/backup.md,
"After a restore").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hall_server.config import DEFAULT_STAFF, default_config_text
from server_kit.pki import export_bundle
from server_kit.ports import reserve_port
from tests.ops.test_backup_hall import bingo, console_state, manifest_of
from tests.regulator.test_feed_processes import ReceiverProcess, journal_of
from tests.security.test_rollback import SENDER, command, error_line, refused_start, register_with_receiver
from tests.support.waiting import START, WAIT, wait_until
from tests.web.conftest import _HASH, HallProcess

pytestmark = [pytest.mark.integration]


@pytest.mark.req("R92.3")
@pytest.mark.timeout(600)
def test_a_restored_hall_behind_its_receiver_stops_and_serves_on_with_the_receivers_records_taken_back(
    tmp_path: Path
) -> None:
    port = reserve_port()
    folder = tmp_path / "hall"
    folder.mkdir()
    config = default_config_text("Fed hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0)
    config = config.replace("generate_strips = 100", "generate_strips = 10").replace("card_count = 600", "card_count = 60")
    (folder / "hall.toml").write_text(config + f'\n[regulator]\nhost = "localhost"\nport = {port}\n'
                                               'hall_id = "hall-server"\n')
    hall = HallProcess(folder).start()  # its first start makes the authority the receiver's certificate comes from
    receiver = ReceiverProcess(tmp_path / "regulator", tmp_path / "regulator-pki", port)
    again: HallProcess | None = None
    try:
        hall.certificate("regulator", "regulator")
        export_bundle(folder / "operator-ca", "regulator", tmp_path / "regulator-pki")
        register_with_receiver(tmp_path / "regulator", folder)
        receiver.start()
        command(hall, "carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
        wait_until(lambda: receiver.held() == journal_of(hall), WAIT, "the receiver to hold the hall's journal")
        archive = tmp_path / "hall.tar.gz"
        made = bingo("backup", "--out", str(archive), home=folder)
        assert made.returncode == 0, made.stderr
        seq = manifest_of(archive)["journal"]["last_seq"]
        command(hall, "carla", "top_up_float", desk="desk-1", amount_cents=10_000)
        command(hall, "carla", "top_up_float", desk="desk-1", amount_cents=20_000)
        wait_until(lambda: receiver.held() == journal_of(hall), WAIT, "the receiver to hold the records after it")
        drawers = console_state(hall)["drawers"]
        assert drawers["desk-1"] == 80_000
        hall.stop()
        held = receiver.held()
        assert len(held) > seq

        behind = tmp_path / "behind"
        restored = bingo("restore", str(archive), "--home", str(behind), "--keys", str(folder))
        assert restored.returncode == 0, restored.stderr
        said = error_line(refused_start(behind))
        # The archive was taken from a running hall: started on it, the hall may first journal that the run
        # before it stopped without a clean stop (R92.5e), one record, before the receiver's answer refuses it.
        assert any(f"holds {len(held)} records of this journal, reported to it before, but the journal here ends "
                   f"at record {end}: the folder was rolled back" in said for end in (seq, seq + 1)), said

        exported = tmp_path / "records.jsonl"
        taken = bingo("regulator", "export-records", SENDER, "--after", str(seq), "--out", str(exported),
                      "--dir", str(tmp_path / "regulator"))
        assert taken.returncode == 0, taken.stderr
        assert f"{len(held) - seq} records of {SENDER}, {seq + 1} to {len(held)}, as {SENDER} signed them" in taken.stdout
        home = tmp_path / "restored"
        restored = bingo("restore", str(archive), "--home", str(home), "--keys", str(folder), "--records", str(exported))
        assert restored.returncode == 0, restored.stderr
        assert f"taken back: records {seq + 1} to {len(held)} from {exported}" in restored.stdout
        again = HallProcess(home).start()
        wait_until(lambda: b"holds this journal up to record" in again.output, START,  # type: ignore[union-attr]
                   "the receiver to say what it holds, and the hall to find it in its journal")
        assert console_state(again)["drawers"] == drawers
        assert journal_of(again)[:len(held)] == held and receiver.alerts() == []
    finally:
        if again is not None:
            again.stop()
        hall.stop()
        receiver.kill()
