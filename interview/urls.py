from django.urls import path

from interview import views

urlpatterns = [
    path("", views.home, name="home"),
    path("questions/<slug:slug>/", views.question_detail, name="question"),
    path("questions/<slug:slug>/steps/<slug:step>/", views.step_detail, name="step"),
    path("concepts/", views.concept_list, name="concepts"),
    path("concepts/<slug:slug>/", views.concept_page, name="concept"),
]
