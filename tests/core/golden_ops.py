"""The edits whose results are frozen in tests/golden/commented.<name>.yaml."""

OPS = {
    "edit-question": lambda d: d.update_case("tiempo-entrega", question="¿cuánto tarda la entrega: días?"),
    "edit-topic-quoted": lambda d: d.update_case("tiempo-entrega", topic="tiempo de 'entrega'"),
    "edit-notes-block": lambda d: d.update_case("tiempo-entrega", notes="Customers ask this\nevery week.\n"),
    "edit-expected-flow": lambda d: d.update_case(
        "devolver", expected=["devolver-1", "devolver-2", "garantía-1"]
    ),
    "edit-expected-block": lambda d: d.update_case("tiempo-entrega", expected=["entrega-2", "entrega-1"]),
    "add-fields": lambda d: d.update_case("precio-entrega", answer="Cuesta 3 €.", tags=["envío"]),
    "remove-fields": lambda d: d.update_case("devolver", expect=None, tags=None),
    "unanswerable": lambda d: d.update_case(
        "precio-entrega", expected=None, must_contain=None, unanswerable=True
    ),
    "add-case": lambda d: d.add_case(id="horario", question="a qué hora abren", unanswerable=True),
    "delete-first": lambda d: d.remove_case("precio-entrega"),
    "delete-middle": lambda d: d.remove_case("devolver"),
    "delete-last": lambda d: d.remove_case("domingo"),
    "reorder": lambda d: d.move_case("domingo", 0),
}
