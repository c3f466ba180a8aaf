# A classic bug: a mutable default argument is created once, when the
# function is defined, and shared by every call that uses the default.

def add_item(item, basket=[]):     # the bug: one list for all calls
    basket.append(item)
    return basket


def add_item_fixed(item, basket=None):
    if basket is None:
        basket = []                  # a new list for each call
    basket.append(item)
    return basket


print(add_item("apple"))
print(add_item("pear"))        # surprise: the apple is still there
print(add_item_fixed("apple"))
print(add_item_fixed("pear"))
