"""Message templates (Korean) for e-mail and SMS.

Templates use ``str.format`` fields. Amounts are passed already formatted by
:func:`shopcore.money.format_won`.
"""
from __future__ import annotations

EMAIL_TEMPLATES: dict[str, tuple[str, str]] = {
    "order_confirmation": (
        "[샵코어] 주문이 접수되었습니다 ({order_id})",
        "{name}님, 주문해 주셔서 감사합니다.\n결제 금액: {amount}\n",
    ),
    "order_cancelled": (
        "[샵코어] 주문이 취소되었습니다 ({order_id})",
        "{name}님, 요청하신 주문 취소가 완료되었습니다.\n환불 예정 금액: {amount}\n"
        "카드 결제는 카드사 사정에 따라 3~5영업일 후 환불됩니다.\n",
    ),
    "refund_completed": (
        "[샵코어] 반품 환불이 처리되었습니다 ({order_id})",
        "{name}님, 반품하신 상품의 환불이 처리되었습니다.\n환불 금액: {amount}\n",
    ),
}

SMS_TEMPLATES: dict[str, str] = {
    "shipped": "[샵코어] 주문하신 상품이 출고되었습니다. 운송장 {tracking_no} ({carrier})",
    "delivered": "[샵코어] 상품이 배송 완료되었습니다. 수령 후 7일 이내 반품 신청 가능합니다.",
}


def render_email(template: str, **fields: str) -> tuple[str, str]:
    """``(subject, body)`` of e-mail ``template`` filled with ``fields``."""
    subject, body = EMAIL_TEMPLATES[template]
    return subject.format(**fields), body.format(**fields)


def render_sms(template: str, **fields: str) -> str:
    return SMS_TEMPLATES[template].format(**fields)
