"""A small folder of documents for the golden-set generator's tests (chunk size 64, overlap 8:
several chunks per document, some naming their document, some not)."""
from __future__ import annotations

from pathlib import Path

REFUNDS = """---
title: Larkspur refund policy
---
# Refunds

Customers may return any unopened item within 21 days of delivery for a full refund of the \
price paid, including the original shipping charge.

Opened items are refunded at 80 percent of the price when they come back within 14 days \
together with the original receipt and every accessory.

## Shipping costs

Return shipping is free for orders above 50 euros; otherwise the customer pays a flat fee \
of 4 euros for each parcel sent back to the warehouse.

Refunds are paid to the original payment card within five working days after the \
warehouse inspects and accepts the returned parcel.
"""

GATEWAY = """---
title: Kestrel gateway manual
---
# Network setup

The second Ethernet port keeps the fixed service address 192.168.50.1 so that a laptop \
can always reach the configuration pages during commissioning.

The first Ethernet port obtains its address by DHCP unless an engineer stores a static \
address, mask and default route on the network settings page.

## Factory reset

Holding the recessed reset button for ten seconds restores every factory setting, clears \
the stored certificates and reboots the device into commissioning mode.

A short press of under two seconds only restarts the application and keeps all settings, \
buffered readings and certificates exactly as they were.
"""

BOILER_KO = """---
title: 한빛아파트 보일러 관리 안내
---
# 점검 주기

보일러는 매년 봄에 전문 기사가 정기 점검을 실시하며 배관의 누수 여부와 압력 밸브의 작동 \
상태를 함께 확인합니다.

점검 결과는 관리 사무소에 서면으로 보고되며 입주민은 평일 근무 시간에 언제든지 열람할 수 \
있습니다.

# 압력 기준

최대 허용 압력은 3바이며 이를 넘으면 안전 밸브가 자동으로 열리고 경고등이 켜집니다.

압력이 1바 아래로 떨어지면 난방 효율이 낮아지므로 거실 벽면의 보충수 밸브를 천천히 열어야 \
합니다.

# 고장 신고

난방이 되지 않거나 온수가 나오지 않으면 관리 사무소 또는 야간 긴급 연락처로 즉시 신고해 \
주십시오.

신고할 때에는 동과 호수, 증상, 화면에 표시된 에러 코드를 함께 알려 주시면 수리가 빨라집니다.

# 동파 예방

겨울철 외출 시에도 보일러 전원을 끄지 말고 외출 모드로 설정하여 배관 동파를 예방하시기 \
바랍니다.

장기간 집을 비울 때에는 온수 밸브를 조금 열어 두고 관리 사무소에 부재 기간을 미리 알려 \
주십시오.

# 교체 기준

설치 후 10년이 지난 보일러는 열효율이 떨어지므로 관리 사무소의 안내에 따라 교체를 검토하는 \
것이 좋습니다.

교체 비용은 세대가 부담하며 지정 업체를 이용하면 설치비의 절반을 관리비 적립금에서 \
지원받을 수 있습니다.

# 배기통 관리

배기통이 막히거나 연결 부위가 벌어지면 일산화탄소가 실내로 들어올 수 있어 매우 위험합니다.

입주민은 배기통 주변에 물건을 쌓아 두지 말고 이상한 냄새가 나면 즉시 창문을 열고 신고해야 \
합니다.
"""


def write_corpus(folder: Path) -> Path:
    """The two documents as Markdown files in `folder` (created); returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "refunds.md").write_text(REFUNDS, encoding="utf-8")
    (folder / "gateway.md").write_text(GATEWAY, encoding="utf-8")
    return folder
