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


def weighing(capture, address, name, frame, kilograms, ohms):
    times = session(capture, address, name, ACCEPTED, [settling(kilograms - 0.35), frame])
    at = times[-1]
    device = device_json(name=name, manufacturer="Eufy", localIdentifier=address)
    metadata = metadata_json(sync_identifier="eufy-p2/%s/%d" % (address, int(at.timestamp())), sync_version=1,
                             IngestImpedanceOhm=ohms)
    return [sample("BodyMass", kilograms, "kg", at, source=SOURCE, device=device, metadata=metadata)]


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
    Case("bad-refused", bad_refused_case),
    Case("bad-checksum", bad_checksum_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
