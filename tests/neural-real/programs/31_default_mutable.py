def append_to(item, bucket=[]):
    bucket.append(item)
    return bucket


first = append_to(1)
second = append_to(2)
fresh = append_to(3, [])
print(first, second, fresh, first is second)
