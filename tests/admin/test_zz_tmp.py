def test_x():
    import admin.api  # noqa
