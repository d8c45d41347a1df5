import uuid

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column


def new_id() -> str:
    return str(uuid.uuid4())


def id_column() -> Mapped[str]:
    return mapped_column(String(36), primary_key=True, default=new_id)
