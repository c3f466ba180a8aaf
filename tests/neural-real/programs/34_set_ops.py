math_club = {101, 102, 103}
chess_club = {103, 104, 101}
both = math_club & chess_club
either = math_club | chess_club
only_math = math_club - chess_club
chess_club.discard(104)
chess_club.add(105)
print(sorted(both), len(either), only_math, sorted(chess_club))
