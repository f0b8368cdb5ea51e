import pytest_twisted

@pytest_twisted.ensureDeferred
async def test_hello(central) -> None:
    client = await central.hall("hall-1", hello=False)
    answer = await client.hello("hall-1")
    assert answer == {"version": 1, "central_id": "central-a"}
    game = await client.get_game()
    assert game["phase"] == "scheduled"
    await central.open_sale()
    answer = await client.buy("r1", count=3)
    assert answer["status"] == "confirmed", answer
