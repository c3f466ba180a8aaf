def group_anagrams(words):
    groups = {}
    for word in words:
        key = "".join(sorted(word))
        groups.setdefault(key, []).append(word)
    return list(groups.values())


words = ["listen", "silent", "enlist", "google", "gogole", "cat", "act"]
grouped = group_anagrams(words)
largest = max(grouped, key=len)
print(len(grouped), largest)
