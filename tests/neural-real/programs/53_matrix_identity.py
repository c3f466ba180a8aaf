def identity(n):
    rows = []
    for i in range(n):
        row = [0] * n
        row[i] = 1
        rows.append(row)
    return rows


eye = identity(3)
alias = eye[0]
alias[2] = 7
trace = sum(eye[k][k] for k in range(3))
print(eye, trace)
