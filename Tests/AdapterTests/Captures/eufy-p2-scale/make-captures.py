#!/usr/bin/env python3
"""Builds the eufy-p2-scale captures in this folder from published bytes (see ORIGIN).

Run from anywhere: `python3 Tests/AdapterTests/Captures/eufy-p2-scale/make-captures.py` (it
rewrites every generated file in this folder). Shared parts: scripts/ble_capture_kit.py. The
handshake is encrypted with the `openssl` command (AES-128-CBC, PKCS#7), never by hand.
"""

import base64
import hashlib
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403

SOURCE = "eufy-p2-scale"
IV = b"0" * 16  # sixteen ASCII "0"
# The client id a conversation picks is random: the captured C0/C2 writes carry this one, and
# the replay (which matches writes tolerantly) answers with the scale's frames all the same.
CLIENT_ID = "1b4e28ba-2fa1-4"
SCALE_ID = "0c3f9a71d2e8b44"

# Real FFF2 frames of a P2 Pro from ble-scale-sync tests/scales/eufy-p2.test.ts (issue #289, ORIGIN).
REAL_87_90 = h("cf 0e 00 cf 08 11 56 22 08 03 88 00 00 00 00 21")  # 87.90 kg, 436.0 ohm
REAL_68_45 = h("cf 0e 00 cf 72 1a bd 1a 06 05 62 00 00 00 00 61")  # 68.45 kg, 677.0 ohm
# The C3 verdict bytes of the same tests: c3 01 00 01 <status> <xor>.
ACCEPTED = h("c3 01 00 01 00 c3")
REFUSED = h("c3 01 00 01 01 c2")


def xor(data):
    value = 0
    for byte in data:
        value ^= byte
    return value


def settling(kilograms):
    """A weight frame built to the layout: not final (byte 12 = 1), no impedance."""
    raw = round(kilograms * 100)
    frame = bytearray(h("cf 0e 00 cf 00 00") + bytes([raw & 0xFF, raw >> 8]) + bytes(8))
    frame[12] = 0x01
    frame[15] = xor(frame[2:15])
    return bytes(frame)


P2_COMPANY = 0xFF48


def p2_advertisement(address, weight_kg, final, heart_rate=0):
    """The P2 family's advertised frame, built to the layout of eufylife-ble-client and ble-scale-sync:
    19 bytes under 0xFF48, the address at 0-5, 0xCF at 6, heart rate at 7 (valid when byte 8's top bits
    are 11), weight at 9-10 (LE, 0.01 kg), 0x00 at 15 when final; unknown bytes zero."""
    frame = bytearray(19)
    frame[0:6] = bytes(int(part, 16) for part in address.split(":"))
    frame[6] = 0xCF
    frame[7] = heart_rate
    frame[8] = 0xC0 if heart_rate else 0x00
    raw = round(weight_kg * 100)
    frame[9], frame[10] = raw & 0xFF, raw >> 8
    frame[15] = 0x00 if final else 0x02
    return bytes(frame)


def advertise(capture, address, name, frames):
    """The scale's name (scan response), then its advertised frames half a second apart; their times."""
    capture.advertising_report(address, name_ad(name), event_type=0x04, rssi=-60)
    times = []
    for frame in frames:
        capture.advance(500)
        capture.advertising_report(address, flags_ad() + manufacturer_ad(P2_COMPANY, frame), event_type=0x00, rssi=-60)
        times.append(capture.at())
    return times


def advertised_metadata(address, at):
    return metadata_json(sync_identifier="eufy-p2/%s/%d" % (address, int(at.timestamp())), sync_version=1)


def key(address):
    return hashlib.md5(address.replace(":", "").upper().encode("ascii")).digest()


def encrypted_frames(text, prefix, address):
    sealed = subprocess.run(["openssl", "enc", "-aes-128-cbc", "-K", key(address).hex(), "-iv", IV.hex()],
                            input=text.encode("utf-8"), capture_output=True, check=True).stdout
    ascii_text = base64.b64encode(sealed)
    count = (len(ascii_text) + 14) // 15
    frames = []
    for index in range(count):
        body = bytes([prefix, count, index, len(ascii_text)]) + ascii_text[index * 15:(index + 1) * 15]
        frames.append(body + bytes([xor(body)]))
    return frames


def session(capture, address, name, verdict, weight_frames):
    write = Characteristic(0xFFF1, 0x0C)
    weight = Characteristic(0xFFF2, 0x10, cccd_value=0x0001)
    handshake = Characteristic(0xFFF4, 0x10, cccd_value=0x0001)
    steps = [(write, "write", frame) for frame in encrypted_frames(CLIENT_ID, 0xC0, address)]
    steps += [(handshake, "notification", frame) for frame in encrypted_frames(SCALE_ID, 0xC1, address)]
    steps += [(write, "write", frame) for frame in encrypted_frames(CLIENT_ID + "_" + SCALE_ID, 0xC2, address)]
    steps.append((handshake, "notification", verdict))
    steps += [(weight, "notification", frame) for frame in weight_frames]
    return gatt_session(capture, address, name, 0xFFF0, [write, weight, handshake], steps)


def weighing(capture, address, name, frame, kilograms, ohms, identified_at=None):
    """A connection's weighing (sync version 2); its sync identifier is the advertised weight's
    (`identified_at`) when the scale advertised it first, else its own arrival's."""
    times = session(capture, address, name, ACCEPTED, [settling(kilograms - 0.35), frame])
    at = times[-1]
    device = device_json(name=name, manufacturer="Eufy", localIdentifier=address)
    metadata = metadata_json(sync_identifier="eufy-p2/%s/%d" % (address, int((identified_at or at).timestamp())), sync_version=2,
                             IngestImpedanceOhm=ohms)
    return [sample("BodyMass", kilograms, "kg", at, source=SOURCE, device=device, metadata=metadata)]


def p2_advertised_case(capture):
    """A P2's advertised weighing (ble-scale-sync's 75.2 kg), settling first: version 1 of the weighing."""
    address = "CF:E6:03:1D:09:F7"
    times = advertise(capture, address, "eufy T9148", [p2_advertisement(address, 74.9, False), p2_advertisement(address, 75.2, True)])
    device = device_json(name="eufy T9148", manufacturer="Eufy", localIdentifier=address)
    return [sample("BodyMass", 75.2, "kg", times[1], source=SOURCE, device=device, metadata=advertised_metadata(address, times[1]))]


def p2_pro_advertised_case(capture):
    """The P2 Pro's advertised weighing with the heart rate it measured (80 kg, 68 /min)."""
    address = "CF:E6:03:1D:09:02"
    at = advertise(capture, address, "eufy T9149", [p2_advertisement(address, 80.0, True, heart_rate=68)])[0]
    device = device_json(name="eufy T9149", manufacturer="Eufy", model="Smart Scale P2 Pro", localIdentifier=address)
    return [
        sample("BodyMass", 80, "kg", at, source=SOURCE, device=device, metadata=advertised_metadata(address, at)),
        sample("HeartRate", 68, "count/min", at, source=SOURCE, device=device, metadata=advertised_metadata(address, at)),
    ]


def p2_pro_advertised_then_connected_case(capture):
    """One weighing both ways: the P2 Pro advertises its final 87.90 kg, then the connection hands over the
    real frame of the same weighing with its impedance. Both records carry the advertised weight's sync
    identifier, the connected one at version 2: the store keeps one sample, the one with the impedance."""
    address = "CF:E6:03:1D:09:0A"  # its own address (the weighings are per run now; kept so the expected file stays)
    at = advertise(capture, address, "eufy T9149", [p2_advertisement(address, 87.9, True)])[0]
    capture.advance(400)
    device = device_json(name="eufy T9149", manufacturer="Eufy", localIdentifier=address)
    advertised = sample("BodyMass", 87.9, "kg", at, source=SOURCE, device=device, metadata=advertised_metadata(address, at))
    return [advertised] + weighing(capture, address, "eufy T9149", REAL_87_90, 87.9, 436, identified_at=at)


def p2_pro_case(capture):
    """A P2 Pro: the handshake, a settling frame skipped, the real final frame taken (87.90 kg, 436 ohm)."""
    return weighing(capture, "CF:E6:03:1D:09:F7", "eufy T9149", REAL_87_90, 87.9, 436)


def p2_case(capture):
    """A P2 (T9148), the same handshake; the real frame of the second person (68.45 kg, 677 ohm)."""
    return weighing(capture, "D0:4B:2A:61:7E:13", "eufy T9148", REAL_68_45, 68.45, 677)


def bad_refused_case(capture):
    """The scale answers C3 with status 1: one rejection, no weighing read."""
    session(capture, "CF:E6:03:1D:09:F7", "eufy T9149", REFUSED, [REAL_87_90])
    return [SOURCE + ": handshake-refused: CF:E6:03:1D:09:F7: the scale refused the handshake (answer c3 01 00 01 01 c2); "
            "wake it by stepping on it and let ingestd connect again"]


def bad_checksum_case(capture):
    """The real frame with its XOR byte broken: rejected with its bytes, no weighing."""
    broken = bytearray(REAL_87_90)
    broken[15] ^= 0x01
    session(capture, "CF:E6:03:1D:09:F7", "eufy T9149", ACCEPTED, [bytes(broken)])
    return [SOURCE + ": bad-checksum: CF:E6:03:1D:09:F7: XOR check does not match: "
            + " ".join("%02x" % b for b in broken)]


CASES = [
    Case("p2-pro-weighing", p2_pro_case, fragmented=True),
    Case("p2-weighing", p2_case),
    Case("p2-advertised", p2_advertised_case),
    Case("p2-pro-advertised", p2_pro_advertised_case),
    Case("p2-pro-advertised-then-connected", p2_pro_advertised_then_connected_case),
    Case("bad-refused", bad_refused_case),
    Case("bad-checksum", bad_checksum_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
