#ifndef CBLUETOOTH_SHIM_H
#define CBLUETOOTH_SHIM_H
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <bluetooth/l2cap.h>

/* BDADDR_ANY expands to a compound literal: not importable. */
static inline bdaddr_t cbt_bdaddr_any(void) { bdaddr_t a = {{0, 0, 0, 0, 0, 0}}; return a; }
/* An HCI filter that passes LE meta events only. */
static inline void cbt_filter_le_meta(struct hci_filter *f) {
    hci_filter_clear(f);
    hci_filter_set_ptype(HCI_EVENT_PKT, f);
    hci_filter_set_event(EVT_LE_META_EVENT, f);
}
static inline int cbt_hci_opcode(int ogf, int ocf) { return cmd_opcode_pack(ogf, ocf); }
#endif
