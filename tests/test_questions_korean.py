"""The offline stand-in's template questions for a Korean passage: each kind in Korean, the
list joined by 와/과 as the word before it asks, and the round trip of a Korean question."""
from __future__ import annotations

import pytest

import ragkit  # noqa: F401 (registers the offline stand-in)
from ragkit.documents import Document
from ragkit.llm import LLM
from ragkit.questions import generate
from ragkit.standin.questions import answer, joined_ko, write
from ragkit.text_stats import reads_korean

TITLE = "한빛아파트 보일러 관리 안내"
PRESSURE = ("최대 허용 압력은 3바이며 이를 넘으면 안전 밸브가 자동으로 열리고 경고등이 켜집니다. "
            "압력이 1바 아래로 떨어지면 난방 효율이 낮아지므로 보충수 밸브를 천천히 열어야 합니다.")
REPORT = "신고할 때에는 동과 호수, 증상, 화면에 표시된 에러 코드를 함께 알려 주시면 수리가 빨라집니다."


@pytest.mark.parametrize("kind, question", [
    ("lexical", "본문에는 최대, 허용과 압력에 관해 무엇이 적혀 있나요?"),
    ("paraphrase", "압력, 허용과 최대에 관한 내용은 무엇인가요?"),
    ("contextual", "한빛아파트 보일러 관리 안내에는 최대, 허용과 압력에 관해 무엇이 적혀 있나요?"),
    ("multi-chunk", "최대와 허용, 그리고 신고와 호수에 관해 각각 무엇이 적혀 있나요?"),
    ("unanswerable", "한빛아파트 보일러 관리 안내에는 ZX-FEBB에 관해 무엇이 적혀 있나요?")])
def test_a_korean_passage_gets_each_kind_of_question_in_korean(kind, question):
    """It got "What does the text state about 최대, 허용 and 압력?" and the like."""
    written = write(kind, TITLE, [PRESSURE, REPORT])
    assert written["question"] == question
    span = "" if kind == "unanswerable" else PRESSURE.split(". ")[0] + "."
    assert written["answer_span"] == span
    # the round trip finds the span again; the unknown code, followed by a particle, none
    assert answer(question, [PRESSURE, REPORT]) == span


def test_an_english_passage_keeps_the_english_questions():
    """A passage is Korean by most of its words, not by any Hangul in it."""
    passage = ("The boiler pressure limit is 3 bar, and the Korean manual calls the safety "
               "valve 안전밸브 throughout its maintenance chapter.")
    assert write("lexical", "Manual", [passage])["question"] == (
        "What does the text state about boiler, pressure and limit?")
    assert write("unanswerable", "Manual", [passage])["question"].startswith(
        "In Manual, what is stated about ZX-")
    assert reads_korean("API 호출 한도는 분당 100회입니다.") and not reads_korean(passage)


def test_the_korean_list_takes_the_particle_its_last_but_one_word_asks_for():
    assert joined_ko(["압력"]) == "압력"
    assert joined_ko(["카드", "결제"]) == "카드와 결제"
    assert joined_ko(["약관", "주식회사"]) == "약관과 주식회사"
    assert joined_ko(["요금", "2024", "이전"]) == "요금, 2024와 이전"
    assert joined_ko(["설치", "10", "지나"]) == "설치, 10과 지나"
    assert joined_ko(["tv", "nv", "55q"]) == "tv, nv 및 55q"


def test_a_question_is_labelled_korean_by_most_of_its_words_not_by_any_hangul(monkeypatch):
    """An English question asking about a Korean word was labelled `lang: ko` (any Hangul
    character made it Korean); the label follows the rule the stand-in writes by."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    english = ("The 안전밸브 opens when the boiler pressure passes the limit of three bar, and "
               "the warning lamp stays lit until a technician resets the valve by hand.")
    documents = [Document("boiler.md", f"# Boiler\n\n{english}\n", "Boiler"),
                 Document("boiler-ko.md", f"# 보일러\n\n{PRESSURE}\n", "보일러")]
    records, _ = generate(documents, n=2, kinds="lexical", llm=LLM(cache=False), embedder=None)
    assert [(r["source"]["doc_id"], r["question"], r["lang"]) for r in records] == [
        ("boiler.md", "What does the text state about 안전, 밸브 and opens?", "en"),
        ("boiler-ko.md", "본문에는 최대, 허용과 압력에 관해 무엇이 적혀 있나요?", "ko")]
