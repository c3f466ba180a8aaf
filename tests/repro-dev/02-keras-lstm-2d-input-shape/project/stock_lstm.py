import numpy as np
import pandas as pd
from sklearn.preprocessing import MinMaxScaler
from tensorflow.keras.models import Sequential
from tensorflow.keras.layers import LSTM, Dense, Dropout

df = pd.read_csv("AAPL.csv")
data = df.filter(["Close"]).values
scaler = MinMaxScaler(feature_range=(0, 1))
scaled = scaler.fit_transform(data)

train_len = int(len(scaled) * 0.8)
train = scaled[:train_len]

X_train, y_train = [], []
for i in range(60, len(train)):
    X_train.append(train[i - 60:i, 0])
    y_train.append(train[i, 0])
X_train, y_train = np.array(X_train), np.array(y_train)

model = Sequential()
model.add(LSTM(50, return_sequences=True, input_shape=(X_train.shape[1],)))
model.add(Dropout(0.2))
model.add(LSTM(50))
model.add(Dense(1))
model.compile(optimizer="adam", loss="mean_squared_error")
model.fit(X_train, y_train, batch_size=32, epochs=20)
