#!/usr/bin/env python3
"""Builds the xiaomi-scale captures in this folder from published bytes (Mi scale advertisements).

Run from anywhere: `python3 Tests/AdapterTests/Captures/xiaomi-scale/make-captures.py`
(it rewrites every generated file in this folder). The shared btsnoop writer and
record builders are in scripts/ble_capture_kit.py.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ among the captures
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts"))
from ble_capture_kit import *  # noqa: E402,F401,F403


# MARK: - xiaomi-scale

XIAOMI = "xiaomi-scale"
XIAOMI_ADDRESS = "50:FB:19:1B:B5:DC"  # the address xiaomi-ble's tests use


def mi_scale_advertisement(capture, name, uuid, payload, event_type=0x00):
    data = flags_ad() + name_ad(name) + service_data_ad(uuid, payload)
    capture.advertising_report(XIAOMI_ADDRESS, data, event_type=event_type, rssi=-60)


def mi_scale_v1_case(capture):
    """xiaomi-ble tests/test_parser.py: test_Xiaomi_Scale1_non_stabilized (0.1 kg, not final),
    test_Xiaomi_Scale1 (86.55 kg stabilized, clock 2021-04-11 16:19:01; rebroadcast),
    test_Xiaomi_Scale1_mass_removed, test_Xiaomi_Scale1_reset."""
    frames = [
        h("82 14 00 E5 07 04 0B 10 17 08"),
        h("22 9E 43 E5 07 04 0B 10 13 01"),
        h("22 9E 43 E5 07 04 0B 10 13 01"),
        h("22 9E 43 E5 07 04 0B 10 13 01"),
        h("A2 20 44 B2 07 01 01 0A 1A 15"),
        h("80 00 00 E5 07 04 0B 10 13 01"),
    ]
    for frame in frames:
        mi_scale_advertisement(capture, "MISCA", 0x181D, frame, event_type=0x03)
        capture.advance(250)
    moment = local(2021, 4, 11, 16, 19, 1)
    return [
        sample("BodyMass", 86.55, "kg", moment, source=XIAOMI,
               device=device_json(name="MISCA", manufacturer="Xiaomi", model="XMTZC01HM/XMTZC04HM",
                                  localIdentifier=XIAOMI_ADDRESS),
               metadata=metadata_json(sync_identifier="%s/2021-04-11T16:19:01/17310" % XIAOMI_ADDRESS,
                                      sync_version=1)),
    ]


def mi_scale_v2_case(capture):
    """xiaomi-ble tests/test_parser.py: test_Xiaomi_Scale2_non_stabilized (105.8 kg, not final),
    test_Xiaomi_Scale2 (85.15 kg, 428 Ω; clock 1970-05-04, i.e. never set), test_Xiaomi_Scale2_reset."""
    frames = [
        h("02 04 B2 07 01 01 12 10 1A 00 00 A8 52"),
        h("02 26 B2 07 05 04 0F 02 01 AC 01 86 42"),
        h("02 26 B2 07 05 04 0F 02 01 AC 01 86 42"),
        h("02 82 B2 07 05 04 0F 02 01 00 00 00 00"),
    ]
    received = None
    for index, frame in enumerate(frames):
        mi_scale_advertisement(capture, "MIBFS", 0x181B, frame)
        if index == 1:
            received = capture.at()
        capture.advance(250)
    return [
        sample("BodyMass", 85.15, "kg", received, source=XIAOMI,
               device=device_json(name="MIBFS", manufacturer="Xiaomi", model="XMTZC02HM/XMTZC05HM",
                                  localIdentifier=XIAOMI_ADDRESS),
               metadata=metadata_json(sync_identifier="%s/1970-05-04T15:02:01/17030" % XIAOMI_ADDRESS,
                                      sync_version=2, IngestDeviceClockUnset=True, IngestImpedanceOhm=428)),
    ]


def bad_mi_scale_case(capture):
    """Lengths the two layouts do not allow, cut from / grown out of xiaomi-ble's published frames:
    the v1 frame without its last byte, the v1 frame with one byte too many, and the v2 frame cut
    inside its impedance."""
    frames = [
        (0x181D, "MISCA", h("22 9E 43 E5 07 04 0B 10 13")),
        (0x181D, "MISCA", h("22 9E 43 E5 07 04 0B 10 13 01 00")),
        (0x181B, "MIBFS", h("02 26 B2 07 05 04 0F 02 01 AC")),
    ]
    for uuid, name, frame in frames:
        mi_scale_advertisement(capture, name, uuid, frame)
        capture.advance(250)
    prefix = XIAOMI + ": "
    return [
        prefix + "short-frame: %s: smartScale frame of 9 bytes ends before timestamp at offset 3: "
        "22 9e 43 e5 07 04 0b 10 13" % XIAOMI_ADDRESS,
        prefix + "long-frame: %s: smartScale frame has 11 bytes, the layout has 10: "
        "22 9e 43 e5 07 04 0b 10 13 01 00" % XIAOMI_ADDRESS,
        prefix + "short-frame: %s: bodyCompositionScale frame of 10 bytes ends before impedance at offset 9: "
        "02 26 b2 07 05 04 0f 02 01 ac" % XIAOMI_ADDRESS,
    ]


HISTORY_CHARACTERISTIC = "00002a2f-0000-3512-2118-0009af100700"


def mi_scale_v2_history_case(capture):
    """A Mi Body Composition Scale's history download, as openScale's MiScaleHandler holds it:
    subscribe to the history characteristic, write 01 96 8A BD 62, 01 FF FF <id 00 01>, 02; the
    scale announces the count (01 <count> 00 ...), notifies its stored frames and ends with 03;
    the app writes 03 and 04 FF FF <id> (acknowledge). The two frames are TheengsDecoder's
    published Mi_Body_Scale_2 service-data vectors (test_ble.cpp), here as history records:
    72.45 kg with 503 ohm, and 140.65 lb with 503 ohm, both at the scale clock 2022-02-14 16:41:58."""
    history = Characteristic(HISTORY_CHARACTERISTIC, 0x18, cccd_value=0x0001)
    kg_frame = h("02 26 E6 07 02 0E 10 29 3A F7 01 9A 38")
    lb_frame = h("03 26 E6 07 02 0E 10 29 3A F7 01 F1 36")
    values = [
        (history, "write", h("01 96 8A BD 62")),
        (history, "write", h("01 FF FF 00 01")),
        (history, "notification", h("01 02 00 00 01 00")),
        (history, "write", h("02")),
        (history, "notification", kg_frame),
        (history, "notification", lb_frame),
        (history, "notification", h("03")),
        (history, "write", h("03")),
        (history, "write", h("04 FF FF 00 01")),
    ]
    times = gatt_session(capture, XIAOMI_ADDRESS, "MIBFS", 0x181B, [history], values)
    moment = local(2022, 2, 14, 16, 41, 58)
    device = device_json(name="MIBFS", manufacturer="Xiaomi", model="XMTZC02HM/XMTZC05HM", localIdentifier=XIAOMI_ADDRESS)
    return [
        sample("BodyMass", 72.45, "kg", moment, source=XIAOMI, device=device,
               metadata=metadata_json(sync_identifier="%s/2022-02-14T16:41:58/14490" % XIAOMI_ADDRESS,
                                      sync_version=2, IngestImpedanceOhm=503)),
        sample("BodyMass", 14065 * 0.45359237 / 100, "kg", moment, source=XIAOMI, device=device,
               metadata=metadata_json(sync_identifier="%s/2022-02-14T16:41:58/14065" % XIAOMI_ADDRESS,
                                      sync_version=2, IngestImpedanceOhm=503)),
    ]


CASES = [
    Case("mi-scale-v1", mi_scale_v1_case),
    Case("mi-scale-v2", mi_scale_v2_case),
    Case("bad-mi-scale", bad_mi_scale_case),
    Case("mi-scale-v2-history", mi_scale_v2_history_case),
]


if __name__ == "__main__":
    generate(__file__, CASES)
