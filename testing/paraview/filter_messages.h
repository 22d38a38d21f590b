// Shared by the C++ tests of the VTK filters: collects the error and warning messages an
// algorithm emits (vtkErrorMacro / vtkWarningMacro invoke these events when observed, instead of
// printing).
#pragma once

#include "vtkCallbackCommand.h"
#include "vtkCommand.h"
#include "vtkNew.h"
#include "vtkObject.h"

#include <string>

struct Messages
{
  std::string errors, warnings;
  vtkNew<vtkCallbackCommand> cb;
  explicit Messages(vtkObject* o)
  {
    cb->SetClientData(this);
    cb->SetCallback([](vtkObject*, unsigned long ev, void* client, void* call) {
      auto* self = static_cast<Messages*>(client);
      const char* text = static_cast<const char*>(call);
      (ev == vtkCommand::ErrorEvent ? self->errors : self->warnings) += text ? text : "";
    });
    o->AddObserver(vtkCommand::ErrorEvent, cb);
    o->AddObserver(vtkCommand::WarningEvent, cb);
  }
};
